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

package top

import (
	"context"
	"fmt"
	"io"
	"slices"
	"strings"
	"time"

	"charm.land/bubbles/v2/help"
	"charm.land/bubbles/v2/key"
	"charm.land/bubbles/v2/viewport"
	tea "charm.land/bubbletea/v2"
	"sigs.k8s.io/controller-runtime/pkg/client"

	v1 "github.com/tether-dev/tether/api/v1alpha1"
	"github.com/tether-dev/tether/internal/hook/hookfsm"
)

// refresh is how often the ages in the frame move on without a change.
const refresh = time.Second

// keyMap is the keys of the list.
type keyMap struct {
	Up, Down, Describe, Recover, Resume, Pause, Restart, Namespace, State, Help, Quit key.Binding
}

func newKeyMap() keyMap {
	return keyMap{
		Up:        key.NewBinding(key.WithKeys("up", "k"), key.WithHelp("↑/k", "up")),
		Down:      key.NewBinding(key.WithKeys("down", "j"), key.WithHelp("↓/j", "down")),
		Describe:  key.NewBinding(key.WithKeys("enter", "d"), key.WithHelp("enter/d", "describe")),
		Recover:   key.NewBinding(key.WithKeys("r"), key.WithHelp("r", "recover")),
		Resume:    key.NewBinding(key.WithKeys("u"), key.WithHelp("u", "resume")),
		Pause:     key.NewBinding(key.WithKeys("p"), key.WithHelp("p", "pause/unpause")),
		Restart:   key.NewBinding(key.WithKeys("R"), key.WithHelp("R", "restart worker")),
		Namespace: key.NewBinding(key.WithKeys("n"), key.WithHelp("n", "namespace filter")),
		State:     key.NewBinding(key.WithKeys("s"), key.WithHelp("s", "state filter")),
		Help:      key.NewBinding(key.WithKeys("?"), key.WithHelp("?", "more keys")),
		Quit:      key.NewBinding(key.WithKeys("q", "ctrl+c"), key.WithHelp("q", "quit")),
	}
}

// ShortHelp implements help.KeyMap.
func (k keyMap) ShortHelp() []key.Binding {
	return []key.Binding{k.Describe, k.Recover, k.Resume, k.Pause, k.Restart, k.Help, k.Quit}
}

// FullHelp implements help.KeyMap.
func (k keyMap) FullHelp() [][]key.Binding {
	return [][]key.Binding{{k.Up, k.Down, k.Describe}, {k.Recover, k.Resume, k.Pause, k.Restart}, {k.Namespace, k.State, k.Help, k.Quit}}
}

// detailKeys is the keys of a describe or recover text.
type detailKeys struct{ Back, Scroll, Quit key.Binding }

// ShortHelp implements help.KeyMap.
func (k detailKeys) ShortHelp() []key.Binding { return []key.Binding{k.Scroll, k.Back, k.Quit} }

// FullHelp implements help.KeyMap.
func (k detailKeys) FullHelp() [][]key.Binding { return [][]key.Binding{k.ShortHelp()} }

// changedMsg says the watches saw a change.
type changedMsg struct{}

// tickMsg moves the clock on.
type tickMsg time.Time

// actionMsg is the end of a key's action.
type actionMsg struct {
	verb string
	obj  Object
	out  string
	err  error
	// show opens out in the pager instead of the status line.
	show bool
}

// Model is the live view, a Bubble Tea model: the lists from a Source,
// a selected row, filters, and a pager for describe and recover.
type Model struct {
	ctx  context.Context
	src  *Source
	opts Options
	keys keyMap
	help help.Model

	snap    Snapshot
	frame   frame
	sel     Object
	errSeen time.Time

	// detail is the title of the text in the pager; empty when the list shows.
	detail string
	pager  viewport.Model
	back   detailKeys
}

// New builds the view of src, which the caller starts. Actions run with ctx.
func New(ctx context.Context, src *Source, opts Options) *Model {
	m := &Model{
		ctx: ctx, src: src, opts: opts, keys: newKeyMap(), help: help.New(),
		frame: frame{now: opts.now(), cfg: opts.config(), namespace: opts.Namespace, selected: -1},
		pager: viewport.New(),
		back: detailKeys{
			Back:   key.NewBinding(key.WithKeys("esc", "q"), key.WithHelp("esc/q", "back")),
			Scroll: key.NewBinding(key.WithKeys("up", "down"), key.WithHelp("↑/↓/pgup/pgdn", "scroll")),
			Quit:   key.NewBinding(key.WithKeys("ctrl+c"), key.WithHelp("ctrl+c", "quit")),
		},
	}
	m.pager.SoftWrap = true
	m.snap = src.Snapshot()
	m.follow()
	return m
}

// Run shows the view on a terminal until the user quits or ctx ends.
func Run(ctx context.Context, src *Source, opts Options, in io.Reader, out io.Writer) error {
	ctx, cancel := context.WithCancel(ctx)
	defer cancel()
	src.Start(ctx)
	p := tea.NewProgram(New(ctx, src, opts), tea.WithContext(ctx), tea.WithInput(in), tea.WithOutput(out))
	_, err := p.Run()
	if ctx.Err() != nil {
		return nil
	}
	return err
}

func (m *Model) waitChange() tea.Cmd {
	return func() tea.Msg {
		select {
		case <-m.src.Changed():
			return changedMsg{}
		case <-m.ctx.Done():
			return nil
		}
	}
}

func tick() tea.Cmd {
	return tea.Tick(refresh, func(t time.Time) tea.Msg { return tickMsg(t) })
}

// Init implements tea.Model: wait for changes and tick.
func (m *Model) Init() tea.Cmd { return tea.Batch(m.waitChange(), tick()) }

// rows is the objects of the lists as shown: the Hooks, then the Workers.
func (m *Model) rows() []Object {
	s := m.frame.filtered(m.snap)
	rows := make([]Object, 0, len(s.Hooks)+len(s.Workers))
	for i := range s.Hooks {
		rows = append(rows, Object{Kind: KindHook, Key: client.ObjectKeyFromObject(&s.Hooks[i])})
	}
	for i := range s.Workers {
		rows = append(rows, Object{Kind: KindWorker, Key: client.ObjectKeyFromObject(&s.Workers[i])})
	}
	return rows
}

// follow keeps the selection on the selected object while the lists
// change, and on the row at the same place when the object went.
func (m *Model) follow() {
	rows := m.rows()
	if i := slices.Index(rows, m.sel); i >= 0 && m.sel.Key.Name != "" {
		m.frame.selected = i
		return
	}
	switch {
	case len(rows) == 0:
		m.frame.selected, m.sel = -1, Object{}
		return
	case m.frame.selected < 0:
		m.frame.selected = 0
	case m.frame.selected >= len(rows):
		m.frame.selected = len(rows) - 1
	}
	m.sel = rows[m.frame.selected]
}

// Selected is the selected object; false when the lists are empty.
func (m *Model) Selected() (Object, bool) { return m.sel, m.sel.Key.Name != "" }

func (m *Model) move(by int) {
	rows := m.rows()
	if len(rows) == 0 {
		return
	}
	m.frame.selected = max(0, min(len(rows)-1, m.frame.selected+by))
	m.sel = rows[m.frame.selected]
}

// Update implements tea.Model.
func (m *Model) Update(msg tea.Msg) (tea.Model, tea.Cmd) {
	switch msg := msg.(type) {
	case tea.WindowSizeMsg:
		m.frame.width, m.frame.height = msg.Width, msg.Height
		m.help.SetWidth(msg.Width)
		m.pager.SetWidth(msg.Width)
		m.pager.SetHeight(max(1, msg.Height-3))
		return m, nil
	case changedMsg:
		m.snap = m.src.Snapshot()
		m.follow()
		if at, err := m.src.LastError(); err != nil && at.After(m.errSeen) {
			m.errSeen = at
			m.frame.status = toneStyles[red].Render("watch: "+err.Error()) + " (retrying)"
		}
		return m, m.waitChange()
	case tickMsg:
		m.frame.now = m.opts.now()
		return m, tick()
	case actionMsg:
		m.finish(msg)
		return m, nil
	case tea.KeyPressMsg:
		if m.detail != "" {
			return m, m.detailKey(msg)
		}
		return m, m.listKey(msg)
	}
	return m, nil
}

func (m *Model) detailKey(msg tea.KeyPressMsg) tea.Cmd {
	switch {
	case key.Matches(msg, m.back.Quit):
		return tea.Quit
	case key.Matches(msg, m.back.Back):
		m.detail = ""
		return nil
	}
	var cmd tea.Cmd
	m.pager, cmd = m.pager.Update(msg)
	return cmd
}

func (m *Model) listKey(msg tea.KeyPressMsg) tea.Cmd {
	k := m.keys
	switch {
	case key.Matches(msg, k.Quit):
		return tea.Quit
	case key.Matches(msg, k.Up):
		m.move(-1)
	case key.Matches(msg, k.Down):
		m.move(1)
	case key.Matches(msg, k.Help):
		m.help.ShowAll = !m.help.ShowAll
	case key.Matches(msg, k.Namespace):
		m.cycleNamespace()
	case key.Matches(msg, k.State):
		m.cycleState()
	case key.Matches(msg, k.Describe):
		return m.act("describe", nil, true, func(ctx context.Context, o Object) (string, error) { return m.opts.Actions.Describe(ctx, o) })
	case key.Matches(msg, k.Recover):
		return m.act("recover", ptr(KindHook), true, func(ctx context.Context, o Object) (string, error) { return m.opts.Actions.Recover(ctx, o.Key) })
	case key.Matches(msg, k.Resume):
		return m.act("resume", ptr(KindHook), false, func(ctx context.Context, o Object) (string, error) { return m.opts.Actions.Resume(ctx, o.Key) })
	case key.Matches(msg, k.Pause):
		if h := m.hook(m.sel.Key); h != nil && h.Spec.Suspend {
			return m.act("unpause", ptr(KindHook), false, func(ctx context.Context, o Object) (string, error) { return m.opts.Actions.Unpause(ctx, o.Key) })
		}
		return m.act("pause", ptr(KindHook), false, func(ctx context.Context, o Object) (string, error) { return m.opts.Actions.Pause(ctx, o.Key) })
	case key.Matches(msg, k.Restart):
		return m.act("worker restart", ptr(KindWorker), false, func(ctx context.Context, o Object) (string, error) {
			return m.opts.Actions.RestartWorker(ctx, o.Key)
		})
	}
	return nil
}

func ptr[T any](v T) *T { return &v }

func (m *Model) hook(key client.ObjectKey) *v1.Hook {
	for i := range m.snap.Hooks {
		if client.ObjectKeyFromObject(&m.snap.Hooks[i]) == key {
			return &m.snap.Hooks[i]
		}
	}
	return nil
}

// act runs do on the selected object, which must be of kind want (nil:
// any), in the background; its actionMsg reports the result.
func (m *Model) act(verb string, want *Kind, show bool, do func(context.Context, Object) (string, error)) tea.Cmd {
	obj, ok := m.Selected()
	switch {
	case !ok:
		m.frame.status = verb + ": nothing is selected"
		return nil
	case want != nil && obj.Kind != *want:
		m.frame.status = fmt.Sprintf("%s: select a %s", verb, *want)
		return nil
	case m.opts.Actions == nil:
		m.frame.status = verb + ": this view takes no action"
		return nil
	}
	m.frame.status = fmt.Sprintf("%s %s/%s ...", verb, strings.ToLower(string(obj.Kind)), obj.Key.Name)
	ctx := m.ctx
	return func() tea.Msg {
		out, err := do(ctx, obj)
		return actionMsg{verb: verb, obj: obj, out: out, err: err, show: show}
	}
}

func (m *Model) finish(msg actionMsg) {
	name := strings.ToLower(string(msg.obj.Kind)) + "/" + msg.obj.Key.Name
	switch {
	case msg.err != nil:
		m.frame.status = toneStyles[red].Render(fmt.Sprintf("%s %s: %v", msg.verb, name, msg.err))
	case msg.show:
		m.detail = fmt.Sprintf("%s %s", msg.verb, name)
		m.pager.SetContent(msg.out)
		m.pager.GotoTop()
		m.frame.status = ""
	default:
		m.frame.status = strings.TrimSpace(msg.out)
	}
}

// cycleNamespace shows the next namespace of the Hooks and Workers seen,
// then every namespace again.
func (m *Model) cycleNamespace() {
	if m.opts.Namespace != "" {
		m.frame.status = fmt.Sprintf("watching namespace %s only; start tether top with -A to see every namespace", m.opts.Namespace)
		return
	}
	var nss []string
	for i := range m.snap.Hooks {
		nss = append(nss, m.snap.Hooks[i].Namespace)
	}
	for i := range m.snap.Workers {
		nss = append(nss, m.snap.Workers[i].Namespace)
	}
	slices.Sort(nss)
	nss = slices.Compact(nss)
	m.frame.nsFilter = next(append([]string{""}, nss...), m.frame.nsFilter)
	m.follow()
}

// cycleState shows the Hooks of the next state, then every state again.
func (m *Model) cycleState() {
	m.frame.stateFilter = next(append([]v1.HookState{""}, hookfsm.States()...), m.frame.stateFilter)
	m.follow()
}

// next is the value after cur in values, the first after the last.
func next[T comparable](values []T, cur T) T {
	i := slices.Index(values, cur)
	return values[(i+1)%len(values)]
}

// View implements tea.Model.
func (m *Model) View() tea.View {
	var content string
	if m.detail != "" {
		content = titleStyle.Render(m.detail) + "\n" + m.pager.View() + "\n" + m.help.View(m.back)
	} else {
		f := m.frame
		f.footer = m.help.View(m.keys)
		content = f.render(m.snap)
	}
	v := tea.NewView(content)
	v.AltScreen = true
	return v
}
