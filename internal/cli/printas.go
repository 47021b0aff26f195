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
	"encoding/json"
	"fmt"
	"io"

	"sigs.k8s.io/yaml"
)

// printAs prints v for `-o json` or `-o yaml` and reports that it did; an
// empty format is the verb's own text, left to the caller, and any other
// format is an error naming the flag.
func printAs(out io.Writer, format string, v any) (bool, error) {
	var data []byte
	var err error
	switch format {
	case "":
		return false, nil
	case "json":
		data, err = json.MarshalIndent(v, "", "  ")
		data = append(data, '\n')
	case "yaml":
		data, err = yaml.Marshal(v)
	default:
		return true, fmt.Errorf("--output: must be one of json, yaml, got %q", format)
	}
	if err != nil {
		return true, err
	}
	_, err = out.Write(data)
	return true, err
}
