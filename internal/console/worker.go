/*
Copyright 2026 The tether authors.

Licensed under the Apache License, Version 2.0 (the "License");
you may not use this file except in compliance with the License.
You may obtain a copy of the License at

    http://www.apache.org/licenses/LICENSE-2.0

Unless required by applicable law or agreed to in writing, software
distributed under the License is distributed on an "AS IS" BASIS,
WITHOUT WARRANTIES OR CONDITIONS OF ANY KIND, either express or implied.
See the License for the specific language governing permissions and
limitations under the License.
*/

package console

import (
	"fmt"
	"net/http"
	"strings"

	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// maxLog is the most of a Worker's log its page shows: the tail.
const maxLog = 64 << 10

type crashView struct {
	Time, Reason, Exit string
	PID                int32
	Freed              []hookLink
	Notes              []string
}

type hookLink struct {
	Name, URL string
}

type workerData struct {
	Namespace, Name string
	Phase, Tone     string
	Process         string
	Command         string
	Workdir         string
	EnvNames        []string
	Restarts        int32
	Crashes         string
	Budget          string
	Started         string
	Heartbeat       string
	CrashRecords    []crashView
	Hooks           []hookLink
	Conditions      [][2]string
	Events          []eventView
	Log             string
	LogNote         string
	Chart           *chart
}

func (h *Handler) worker(w http.ResponseWriter, r *http.Request) {
	ctx := r.Context()
	wk := &v1.Worker{}
	if err := h.o.APIReader.Get(ctx, client.ObjectKey{Namespace: r.PathValue("namespace"), Name: r.PathValue("name")}, wk); err != nil {
		h.fail(w, r, err)
		return
	}
	events, err := eventsAbout(ctx, h.o.Reader, "Worker", wk)
	if err != nil {
		h.fail(w, r, err)
		return
	}
	hooks := &v1.HookList{}
	if err := h.o.Reader.List(ctx, hooks, client.InNamespace(wk.Namespace)); err != nil {
		h.fail(w, r, err)
		return
	}
	now := h.o.Now()
	row := workerRowOf(wk, now)
	st := &wk.Status
	d := &workerData{Namespace: wk.Namespace, Name: wk.Name, Phase: row.Phase, Tone: row.Tone, Process: row.Process,
		Command: dash(strings.Join(wk.Spec.Command, " ")), Workdir: dash(wk.Spec.Workdir), Restarts: st.Restarts,
		Crashes: row.Crashes, Budget: workerfsm.Budget(&wk.Spec, st, now), Started: "-", Heartbeat: "-"}
	if wk.Spec.Template != nil {
		d.Command = "a Pod from spec.template"
	}
	// Values may be credentials: the console shows the names only.
	for _, e := range wk.Spec.Env {
		d.EnvNames = append(d.EnvNames, e.Name)
	}
	if st.StartedAt != nil {
		d.Started = stamp(st.StartedAt.Time) + " (" + age(now.Sub(st.StartedAt.Time)) + " ago)"
	}
	if st.LastHeartbeat != nil {
		d.Heartbeat = age(now.Sub(st.LastHeartbeat.Time)) + " ago"
	}
	for i := len(st.Crashes) - 1; i >= 0; i-- {
		c := &st.Crashes[i]
		v := crashView{Time: stamp(c.Time.Time), Reason: c.Reason, PID: c.PID, Exit: "-"}
		switch {
		case c.ExitCode != nil:
			v.Exit = fmt.Sprintf("exit %d", *c.ExitCode)
		case c.Signal != nil:
			v.Exit = fmt.Sprintf("signal %d", *c.Signal)
		}
		seen := map[string]bool{}
		for _, hh := range c.Held {
			seen[hh.Name] = true
			v.Freed = append(v.Freed, hookLink{Name: hh.Name, URL: hookURL(wk.Namespace, hh.Name)})
		}
		if c.Hook != "" && !seen[c.Hook] {
			v.Freed = append(v.Freed, hookLink{Name: c.Hook, URL: hookURL(wk.Namespace, c.Hook)})
		}
		if c.Restarted {
			v.Notes = append(v.Notes, "restarted")
		}
		if c.Forgiven {
			v.Notes = append(v.Notes, "forgiven")
		}
		d.CrashRecords = append(d.CrashRecords, v)
	}
	for i := range hooks.Items {
		if hk := &hooks.Items[i]; hk.Spec.Assignee == wk.Name {
			d.Hooks = append(d.Hooks, hookLink{Name: hk.Name, URL: hookURL(hk.Namespace, hk.Name)})
		}
	}
	for _, c := range st.Conditions {
		d.Conditions = append(d.Conditions, [2]string{c.Type, fmt.Sprintf("%s %s: %s", c.Status, c.Reason, c.Message)})
	}
	for i := range events {
		d.Events = append(d.Events, eventViewOf(&events[i]))
	}
	if h.o.Logs == nil {
		d.LogNote = "this console does not read logs; use tether logs worker/" + wk.Name
	} else if text, err := h.o.Logs(ctx, wk, maxLog); err != nil {
		d.LogNote = err.Error()
	} else {
		d.Log = text
	}
	d.Chart = crashChart(wk, now)
	h.render(w, r, "worker", page{Title: "worker " + wk.Namespace + "/" + wk.Name, Live: h.o.Watcher != nil, Body: d})
}
