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

package validation_test

import (
	"os"
	"testing"

	"github.com/tether-dev/tether/internal/hook/validation"
)

// TestMain lets this test binary be the supervisor of the validations it runs.
func TestMain(m *testing.M) {
	validation.ServeSupervisor()
	os.Exit(m.Run())
}
