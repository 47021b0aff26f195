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
	"context"
	"errors"
	"fmt"
	"io"
	"strings"

	"github.com/spf13/cobra"
	apierrors "k8s.io/apimachinery/pkg/api/errors"
	"k8s.io/cli-runtime/pkg/genericclioptions"
	"k8s.io/cli-runtime/pkg/printers"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/agent/stepdone"
	"github.com/tether-dev/tether/internal/config"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
	"github.com/tether-dev/tether/internal/hook/hookwrite"
	"github.com/tether-dev/tether/internal/workspace/stepfiles"
)

// ActorEnv names who the CLI acts for in status.history; default ActorDefault.
const ActorEnv = config.ActorEnv

// ActorDefault is the history actor of CLI verbs when $TETHER_ACTOR is unset
// and the verb is not known (the verbs name themselves: see verbActor).
const ActorDefault = "cli"

// maxFilesTouched is status.currentStep.filesTouched's MaxItems.
const maxFilesTouched = stepfiles.Max

type verbKey struct{}

// withVerb returns ctx carrying the running verb's actor: "tether" and its
// command path below the root, whatever name the binary was started as.
func withVerb(ctx context.Context, cmd *cobra.Command) context.Context {
	path := []string{}
	for c := cmd; c.HasParent(); c = c.Parent() {
		path = append([]string{c.Name()}, path...)
	}
	return context.WithValue(ctx, verbKey{}, strings.Join(append([]string{"tether"}, path...), " "))
}

// actor is who the CLI acts for in history and Events: $TETHER_ACTOR, else
// the verb ("tether step done"), else ActorDefault.
func actor(ctx context.Context) string {
	if v, ok := ctx.Value(verbKey{}).(string); ok {
		return actorOr(v)
	}
	return actorOr(ActorDefault)
}

// hookVerb is what the agent verbs share: the global options, the output
// flags and the writers.
type hookVerb struct {
	global *GlobalOptions
	print  *genericclioptions.PrintFlags
	out    io.Writer
	errOut io.Writer
}

func newHookVerb(g *GlobalOptions, cmd *cobra.Command) *hookVerb {
	v := &hookVerb{global: g, print: genericclioptions.NewPrintFlags("").WithDefaultOutput("")}
	v.print.AddFlags(cmd)
	return v
}

// open opens the backend and remembers the command's writers.
func (v *hookVerb) open(cmd *cobra.Command) (*Backend, error) {
	v.out, v.errOut = cmd.OutOrStdout(), cmd.ErrOrStderr()
	if _, err := v.printer(); err != nil {
		return nil, err
	}
	return v.global.Backend(cmd.Context())
}

func (v *hookVerb) printer() (printers.ResourcePrinter, error) {
	if v.print.OutputFormat == nil || *v.print.OutputFormat == "" {
		return nil, nil
	}
	p, err := v.print.ToPrinter()
	if err != nil {
		return nil, fmt.Errorf("--output: %w", err)
	}
	return p, nil
}

// show prints hook: with -o as the printer says, otherwise as
// `hook.agents.tether.dev/NAME step "build" (1/3) running, attempt 1`
// followed by the next action.
func (v *hookVerb) show(b *Backend, hook *v1.Hook) error {
	p, err := v.printer()
	if err != nil {
		return err
	}
	if p != nil {
		obj := hook.DeepCopy()
		gvks, _, err := b.Scheme.ObjectKinds(obj)
		if err != nil {
			return err
		}
		obj.GetObjectKind().SetGroupVersionKind(gvks[0])
		return p.PrintObj(obj, v.out)
	}
	_, err = io.WriteString(v.out, hookLine(hook))
	return err
}

// hookLine is what an agent verb prints of hook without -o: where it
// stands, then the next action.
func hookLine(hook *v1.Hook) string {
	return fmt.Sprintf("hook.%s/%s %s\nnext: %s\n", v1.GroupVersion.Group, hook.Name, hookfsm.Describe(hook), hookfsm.NextAction(hook))
}

// transition performs one Hook transition through hookwrite: read, apply
// the event that build returns, write with retry-on-conflict, and record an
// Event naming the actor. A rejected event writes nothing.
func transition(ctx context.Context, b *Backend, name string, build hookwrite.Build) (*v1.Hook, error) {
	return transitionAs(ctx, b, client.ObjectKey{Namespace: b.Namespace, Name: name}, actor(ctx), build)
}

// transitionAs is transition of the Hook at key, for actor.
func transitionAs(ctx context.Context, b *Backend, key client.ObjectKey, actor string, build hookwrite.Build) (*v1.Hook, error) {
	rec, err := b.Recorder()
	if err != nil {
		return nil, err
	}
	hook, _, err := hookwrite.Transition(ctx, b.Client, key, build, hookwrite.Options{Actor: actor, Recorder: rec})
	if err != nil {
		return nil, explainHookErr(key.Name, err)
	}
	return hook, nil
}

// explainHookErr names the Hook in err unless the error already does: the
// state machine's errors and the API's not-found and conflict errors do.
func explainHookErr(name string, err error) error {
	var statusErr apierrors.APIStatus
	if errors.Is(err, hookfsm.ErrRejected) || errors.As(err, &statusErr) {
		return err
	}
	return fmt.Errorf("hook %q: %w", name, err)
}

// simpleVerb builds a verb that applies one event to HOOK.
func simpleVerb(g *GlobalOptions, use, short, long string, event hookfsm.Event, reason string) *cobra.Command {
	var message string
	// The agent's own verbs may leave the Hook to the working directory's
	// binding; the terminal ones must name it.
	cmd := &cobra.Command{Use: use + " [HOOK]", Short: short, Long: long + hookArgNote, Args: optionalHook}
	if event == hookfsm.Abandon || event == hookfsm.Fail {
		cmd.Use, cmd.Long, cmd.Args = use+" HOOK", long, exactHook
	}
	v := newHookVerb(g, cmd)
	if reason != "" {
		cmd.Flags().StringVar(&message, "reason", "", reason)
	}
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if reason != "" && cmd.Flags().Changed("reason") && strings.TrimSpace(message) == "" {
			return fmt.Errorf("--reason: must not be empty")
		}
		if required := event == hookfsm.Await || event == hookfsm.Fail; required && strings.TrimSpace(message) == "" {
			return fmt.Errorf("--reason is required: say why the hook is %s", map[hookfsm.Event]string{hookfsm.Await: "awaiting a human", hookfsm.Fail: "failed"}[event])
		}
		b, err := v.open(cmd)
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		key, err := resolveHook(cmd.Context(), cmd, b, args, v.errOut)
		if err != nil {
			return err
		}
		hook, err := transition(cmd.Context(), b, key.Name, func(*v1.Hook) (hookfsm.Input, error) {
			return hookfsm.Input{Event: event, Message: message}, nil
		})
		if err != nil {
			return err
		}
		return v.show(b, hook)
	}
	return cmd
}

func exactHook(cmd *cobra.Command, args []string) error {
	if len(args) != 1 {
		return fmt.Errorf("%s takes exactly one argument, the Hook's name; got %d", cmd.CommandPath(), len(args))
	}
	return nil
}

// newAgentCommands returns the verbs an agent uses to report its progress.
func newAgentCommands(g *GlobalOptions) []*cobra.Command {
	step := &cobra.Command{
		Use:   "step",
		Short: "Begin a step, or finish it by running its validations",
	}
	step.AddCommand(newStepBeginCommand(g), newStepDoneCommand(g))
	return []*cobra.Command{
		step,
		simpleVerb(g, "heartbeat", "Report that the agent working on a hook is alive",
			"Refresh status.lastHeartbeat, so the hook is not considered stale. It changes no state.", hookfsm.Heartbeat, ""),
		simpleVerb(g, "await", "Hand a hook to a person, with a reason",
			"Move the hook to awaiting_human; history records the reason. `tether resume` continues.", hookfsm.Await, "why a person is needed (required)"),
		simpleVerb(g, "resume", "Continue a hook after a person answered or after an interruption",
			"From awaiting_human, return to where the hook was. From recovering, continue as status.recovery says:\nan interrupted attempt counts, an interrupted validation does not.", hookfsm.Resume, ""),
		simpleVerb(g, "abandon", "Give a hook up (terminal)", "Move the hook to abandoned, a terminal state.", hookfsm.Abandon, "why the hook is abandoned"),
		simpleVerb(g, "fail", "End a hook as failed, with a reason (terminal)", "Move the hook to failed, a terminal state; history records the reason.", hookfsm.Fail, "why the hook failed (required)"),
		newReceiptsCommand(g),
	}
}

func newStepBeginCommand(g *GlobalOptions) *cobra.Command {
	var workingOn string
	var files []string
	cmd := &cobra.Command{
		Use:   "begin [HOOK]",
		Short: "Begin the current step of a hook",
		Long: `Begin the hook's current step: record what is being worked on and the files
touched, and move the hook to step_running.

Without --files, the files are those git status reports in spec.workspace
(modified, staged, deleted, renamed and untracked files).` + hookArgNote,
		Args: optionalHook,
	}
	v := newHookVerb(g, cmd)
	cmd.Flags().StringVar(&workingOn, "working-on", "", "a short description of what the agent is doing")
	cmd.Flags().StringSliceVar(&files, "files", nil, "workspace-relative paths the step touches (default: detected with git status in spec.workspace)")
	cmd.RunE = func(cmd *cobra.Command, args []string) error {
		if len(files) > maxFilesTouched {
			return fmt.Errorf("--files: %d files, at most %d", len(files), maxFilesTouched)
		}
		for _, f := range files {
			if strings.TrimSpace(f) == "" {
				return fmt.Errorf("--files: empty path in %q", strings.Join(files, ","))
			}
		}
		b, err := v.open(cmd)
		if err != nil {
			return err
		}
		defer func() { _ = b.Close() }()
		named := files
		if cmd.Flags().Changed("files") && named == nil {
			named = []string{}
		}
		key, err := resolveHook(cmd.Context(), cmd, b, args, v.errOut)
		if err != nil {
			return err
		}
		rec, err := b.Recorder()
		if err != nil {
			return err
		}
		hook, err := stepdone.Begin(cmd.Context(), stepdone.BeginOptions{
			Client: b.Client, Key: key, Write: hookwrite.Options{Actor: actor(cmd.Context()), Recorder: rec},
			WorkingOn: workingOn, Files: named, Out: v.errOut,
		})
		if err != nil {
			return explainHookErr(key.Name, err)
		}
		return v.show(b, hook)
	}
	return cmd
}
