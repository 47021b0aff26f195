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

package cli

import (
	"fmt"

	"k8s.io/kubectl/pkg/describe"

	tetherv1alpha1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/config"
)

// writeDefaults writes the settings a Hook's spec may leave to the
// configuration: the value in effect and where it came from.
func writeDefaults(w describe.PrefixWriter, spec *tetherv1alpha1.HookSpec, cfg *config.Config) {
	if cfg == nil {
		cfg = config.Default("")
	}
	e := cfg.Effective(spec)
	from := func(s config.Source) string {
		if s == config.FromFile && cfg.File != "" {
			return fmt.Sprintf("%s %s", s, cfg.File)
		}
		return string(s)
	}
	w.Write(describe.LEVEL_1, "Stale After:\t%s (%s)\n", e.StaleAfter, from(e.Sources.StaleAfter))
	w.Write(describe.LEVEL_1, "Checkpoint Interval:\t%s (%s)\n", e.CheckpointInterval, from(e.Sources.CheckpointInterval))
	w.Write(describe.LEVEL_1, "Max Checkpoints:\t%d (%s)\n", e.MaxCheckpoints, from(e.Sources.MaxCheckpoints))
}
