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
	"time"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/worker/workerfsm"
)

// chart is a small SVG picture drawn on the server: lanes of bars on a
// time axis, with marks. Every text in it reaches the page through
// html/template, escaped.
type chart struct {
	Width, Height int
	Left          int
	Lanes         []lane
	Bars          []bar
	Marks         []mark
	Ticks         []tick
	Shade         *bar
}

type lane struct {
	Y     int
	Label string
}

type bar struct {
	X, Y, W, H int
	Class      string
	Title      string
}

type mark struct {
	X, Y  int
	Class string
	Title string
	URL   string
}

type tick struct {
	X      int
	Label  string
	Anchor string
}

const (
	chartWidth = 900
	chartLeft  = 150
	laneHeight = 22
	chartTop   = 8
)

// axis maps times in [from, to] onto the chart's plot area.
type axis struct {
	from, to time.Time
}

func (a axis) x(t time.Time) int {
	span := a.to.Sub(a.from)
	if span <= 0 {
		return chartLeft
	}
	f := float64(t.Sub(a.from)) / float64(span)
	f = min(max(f, 0), 1)
	return chartLeft + int(f*float64(chartWidth-chartLeft-10))
}

func (a axis) ticks() []tick {
	var out []tick
	for i := 0; i <= 4; i++ {
		t := a.from.Add(time.Duration(float64(a.to.Sub(a.from)) * float64(i) / 4))
		anchor := "middle"
		switch i {
		case 0:
			anchor = "start"
		case 4:
			anchor = "end"
		}
		out = append(out, tick{X: a.x(t), Label: t.UTC().Format("15:04:05"), Anchor: anchor})
	}
	return out
}

// stepStates are the states in which a Hook works on a step; the others
// are drawn on the Hook's own lane.
var stepStates = map[v1.HookState]bool{
	v1.HookStepPending: true, v1.HookStepRunning: true, v1.HookStepValidating: true,
	v1.HookAwaitingHuman: true, v1.HookRecovering: true,
}

// hookTimeline draws hk's history: a lane per step and one for the Hook,
// a bar per stretch between transitions coloured by state, and the
// checkpoints as marks on their own lane, each linking to its diff
// against the workspace.
func hookTimeline(hk *v1.Hook, cps []v1.Checkpoint, now time.Time) *chart {
	hist := hk.Status.History
	if len(hist) == 0 {
		return nil
	}
	end := now
	if hk.Status.TerminalAt != nil {
		end = hk.Status.TerminalAt.Time
	}
	a := axis{from: hist[0].Time.Time, to: end}
	for _, cp := range cps {
		if t := cp.CreationTimestamp.Time; t.After(a.to) {
			a.to = t
		}
	}
	c := &chart{Width: chartWidth, Left: chartLeft}
	hookLane := len(hk.Spec.Steps)
	cpLane := hookLane + 1
	laneY := func(i int) int { return chartTop + i*laneHeight }
	for i, s := range hk.Spec.Steps {
		c.Lanes = append(c.Lanes, lane{Y: laneY(i), Label: fmt.Sprintf("%d %s", i+1, clip(s.Name, 18))})
	}
	c.Lanes = append(c.Lanes, lane{Y: laneY(hookLane), Label: "hook"}, lane{Y: laneY(cpLane), Label: "checkpoints"})
	for i, e := range hist {
		stop := end
		if i+1 < len(hist) {
			stop = hist[i+1].Time.Time
		}
		ln := hookLane
		if stepStates[e.To] && int(e.Step) < len(hk.Spec.Steps) {
			ln = int(e.Step)
		}
		x := a.x(e.Time.Time)
		w := max(a.x(stop)-x, 2)
		title := fmt.Sprintf("%s: %s → %s by %s at %s", e.Event, e.From, e.To, dash(e.Actor), stamp(e.Time.Time))
		c.Bars = append(c.Bars, bar{X: x, Y: laneY(ln) + 3, W: w, H: laneHeight - 6, Class: "s-" + string(e.To), Title: title})
		c.Marks = append(c.Marks, mark{X: x, Y: laneY(ln) + laneHeight/2, Class: "transition", Title: title})
	}
	for _, cp := range cps {
		title := fmt.Sprintf("checkpoint %s (%s) at %s", cp.Name, cp.Spec.Trigger, stamp(cp.CreationTimestamp.Time))
		m := mark{X: a.x(cp.CreationTimestamp.Time), Y: laneY(cpLane) + laneHeight/2, Class: "checkpoint", Title: title}
		if commitOf(&cp) != "" {
			m.URL = hookURL(hk.Namespace, hk.Name) + "/diff/" + cp.Name + "?against=workspace"
		}
		c.Marks = append(c.Marks, m)
	}
	c.Height = laneY(cpLane+1) + 18
	c.Ticks = a.ticks()
	return c
}

// crashChart draws wk's crash records on a time axis, with its restart
// window shaded: the crashes that count toward CrashLoop are inside it.
func crashChart(wk *v1.Worker, now time.Time) *chart {
	crashes := wk.Status.Crashes
	if len(crashes) == 0 {
		return nil
	}
	window := workerfsm.CrashWindow(&wk.Spec)
	from := now.Add(-window)
	if t := crashes[0].Time.Time; t.Before(from) {
		from = t
	}
	a := axis{from: from, to: now}
	c := &chart{Width: chartWidth, Left: chartLeft, Height: chartTop + laneHeight + 26}
	c.Lanes = []lane{{Y: chartTop, Label: "crashes"}}
	shade := bar{X: a.x(now.Add(-window)), Y: chartTop, H: laneHeight, Class: "window",
		Title: "the restart window: " + age(window)}
	shade.W = max(a.x(now)-shade.X, 2)
	c.Shade = &shade
	for _, cr := range crashes {
		c.Marks = append(c.Marks, mark{X: a.x(cr.Time.Time), Y: chartTop + laneHeight/2, Class: "crash",
			Title: fmt.Sprintf("%s: %s", stamp(cr.Time.Time), cr.Reason)})
	}
	c.Ticks = a.ticks()
	return c
}

// clip shortens s to n runes for a lane label.
func clip(s string, n int) string {
	r := []rune(s)
	if len(r) <= n {
		return s
	}
	return string(r[:n-1]) + "…"
}
