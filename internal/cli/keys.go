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
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/receipts"
)

// KeyManager is the receipt key manager of the configuration: the master
// key in the key directory of --config, by default $TETHER_HOME/keys.
func (o *GlobalOptions) KeyManager() (*receipts.FileKeyManager, error) {
	cfg, err := config.Load(o.ConfigFile)
	if err != nil {
		return nil, err
	}
	return &receipts.FileKeyManager{Dir: cfg.KeyDir}, nil
}
