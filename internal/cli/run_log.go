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
	"flag"
	"os"

	"github.com/spf13/pflag"
	"go.uber.org/zap/zapcore"
	"golang.org/x/term"
	"sigs.k8s.io/controller-runtime/pkg/log/zap"
)

// zapEncoderFlag is controller-runtime's flag that chooses the log format.
const zapEncoderFlag = "zap-encoder"

// The log formats of tether run.
const (
	logConsole = "console"
	logJSON    = "json"
)

// chooseLogEncoder settles tether run's log format on o: the one
// --zap-encoder names, else human-readable console lines when stderr (where
// the log goes) is a terminal, and JSON lines otherwise, for files and log
// collectors. It returns the format chosen.
func chooseLogEncoder(o *zap.Options, flags *pflag.FlagSet, stderrIsTerminal bool) string {
	if f := flags.Lookup(zapEncoderFlag); f != nil && f.Changed {
		return f.Value.String()
	}
	if !stderrIsTerminal {
		zap.JSONEncoder()(o)
		return logJSON
	}
	zap.ConsoleEncoder(func(c *zapcore.EncoderConfig) { c.EncodeLevel = zapcore.CapitalColorLevelEncoder })(o)
	return logConsole
}

// bindLogFlags adds controller-runtime's --zap-* flags, bound to o, to fs.
func bindLogFlags(fs *pflag.FlagSet, o *zap.Options) {
	goFlags := flag.NewFlagSet("zap", flag.ContinueOnError)
	o.BindFlags(goFlags)
	fs.AddGoFlagSet(goFlags)
}

// stderrIsTerminal tells whether the process's stderr is a terminal.
func stderrIsTerminal() bool { return term.IsTerminal(int(os.Stderr.Fd())) }
