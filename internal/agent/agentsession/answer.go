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

package agentsession

import (
	"context"

	"k8s.io/client-go/tools/events"
	"sigs.k8s.io/controller-runtime/pkg/client"

	"github.com/tether-dev/tether/internal/agent/agentevent"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/receipts"
)

// Backend is what Answer needs of the store it answers on: the client,
// and the capabilities the caller chose for it, asked for only by the
// events that use them.
type Backend struct {
	// Client reads and writes the Hooks.
	Client client.Client
	// Namespace is where Hooks are looked for when neither the environment
	// nor a binding names one.
	Namespace string
	// Recorder returns the recorder of Events; nil records none.
	Recorder func() (events.EventRecorder, error)
	// Keys returns where the receipt keys live; nil, or an error, renders
	// the recovery file without verifying signatures.
	Keys func() (receipts.KeyManager, error)
}

// Answer answers ev, sent by an agent with caps, on b with cfg's settings,
// wiring each event to what it needs: an end of turn records Events and
// takes the Stop caps of cfg.agentLoop; a session start and the end of a
// compaction verify receipts for the recovery file they give; a
// checkpoint, when one is taken, records its Event. The other events start
// no Event broadcaster and read no key.
func Answer(ctx context.Context, ev agentevent.Event, caps agentevent.Capabilities, b Backend, cfg *config.Config, getenv func(string) string) (Result, error) {
	opts := Options{Client: b.Client, Namespace: b.Namespace, Getenv: getenv, DefaultStaleAfter: cfg.StaleAfter.Duration, Capabilities: caps}
	recorder := func() events.EventRecorder {
		if b.Recorder == nil {
			return nil
		}
		rec, err := b.Recorder()
		if err != nil {
			return nil
		}
		return rec
	}
	opts.CheckpointRecorder = recorder
	switch ev.Kind {
	case agentevent.TurnEnd:
		opts.Recorder = recorder()
		opts.Limits = agentevent.Limits{MaxConsecutive: int(cfg.AgentLoop.MaxConsecutive), MaxPerHook: int(cfg.AgentLoop.MaxPerHook)}
	case agentevent.SessionStart, agentevent.PostCompact:
		if b.Keys != nil {
			if km, err := b.Keys(); err == nil {
				opts.Evidence = receipts.EvidenceFunc(ctx, km)
			}
		}
	}
	return Serve(ctx, ev, opts)
}
