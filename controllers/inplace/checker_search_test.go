package inplace

import (
	"fmt"
	"runtime/debug"
	"strings"
	"testing"
)

// The search behind TestProtocolChecker: breadth first over the model of
// checker_test.go, so that each kind of violation is reported with a
// shortest trace. It keeps tens of millions of states, so each is stored
// packed in a few words, once, and indexed by an open-addressing table of
// positions rather than a map that would keep a second copy.

// maxStates stops a model that grew past what a CI machine's memory holds,
// rather than let the machine kill the run.
const maxStates = 60_000_000

// TestProtocolChecker explores the model. Safety, budget, tally and
// isolation violations are found on the step that breaks them, and states
// past them are not explored. Liveness and exactness are checked once
// every state is known: from each state, the quiet run that always takes
// the first quiet step must reach a quiet state that converged accepts
// (unless that run passes a step already reported).
func TestProtocolChecker(t *testing.T) {
	states, err := search(func(v *violation, trace string) bool {
		t.Errorf("%s\n%s", v.message, trace)
		return true
	})
	if err != nil {
		t.Fatal(err)
	}
	t.Logf("explored %d states", states)
}

// TestProtocolCheckerProcessTier explores the model with every Pod in the
// process tier (processTier).
func TestProtocolCheckerProcessTier(t *testing.T) {
	processTier = true
	defer func() { processTier = false }()
	TestProtocolChecker(t)
}

// search explores the model breadth first from initial() and reports each
// kind of violation once, with its shortest trace, for as long as report
// asks for more. It returns how many states it explored.
func search(report func(v *violation, trace string) (more bool)) (int, error) {
	// What the search keeps holds no pointers and costs the collector
	// nothing to keep; collecting the garbage of each step often keeps the
	// heap near what is kept.
	defer debug.SetGCPercent(debug.SetGCPercent(25))
	c := newChecker()
	c.add(initial(), -1)
	reported, more := map[string]bool{}, true
	found := func(v *violation, at int32, last string) {
		if !reported[v.kind] {
			reported[v.kind] = true
			more = report(v, c.trace(at, last))
		}
	}
	for i := int32(0); int(i) < c.len() && more; i++ {
		if c.len() > maxStates {
			return c.len(), fmt.Errorf("the model grew past %d states: bound it tighter", maxStates)
		}
		s := c.at(i).unpack()
		steps := quiet(s)
		if len(steps) == 0 {
			c.next[i] = quiescent
		}
		for k, st := range steps {
			if st.violation != nil {
				c.reportStep(s, st, i, found)
				continue
			}
			j, _ := c.add(st.next, i)
			if k == 0 {
				c.next[i] = j
			}
		}
		for _, st := range faults(s) {
			if st.violation != nil {
				c.reportStep(s, st, i, found)
				continue
			}
			c.add(st.next, i)
		}
	}
	for i := int32(0); int(i) < c.len() && more; i++ {
		if v := c.settle(i); v != nil {
			found(v, i, "... then quiet steps until nothing changes")
		}
	}
	return c.len(), nil
}

func (c *checker) reportStep(s state, st step, at int32, report func(*violation, int32, string)) {
	describing = true
	_, labelled := findStep(s, st.next)
	describing = false
	report(st.violation, at, labelled)
}

// findStep finds the labelled step from s to next.
func findStep(s, next state) (step, string) {
	for _, st := range append(quiet(s), faults(s)...) {
		if st.next == next {
			return st, st.label
		}
	}
	return step{}, ""
}

// checker holds the explored states, packed, in the order they were found;
// for each, how it was first reached (a shortest path) and where its first
// quiet step leads.
type checker struct {
	chunks [][]packed
	// table holds positions in chunks plus one (0: empty), at the slot
	// their state's hash picks or the next free one. It is kept at most
	// half full, where a lookup of a new state probes few slots, each a
	// read of a stored state.
	table []int32
	// parent is -1 for the initial state.
	parent []int32
	// next is the state the first quiet step leads to: quiescent when
	// there is none, unfollowed when that step broke a property (it is
	// reported) or the state was not explored.
	next []int32
	// ends memoizes, for the quiet states that quiet runs end in, what
	// converged says.
	ends map[int32]*violation
	// settled: the quiet state each state's quiet run ends in, once known.
	settled []int32
}

const (
	quiescent  int32 = -1
	unfollowed int32 = -2
	// noQuietState: the quiet run did not end.
	noQuietState int32 = -3
	unsettled    int32 = -4
)

const chunkBits = 20

func newChecker() *checker {
	return &checker{table: make([]int32, 1<<20), ends: map[int32]*violation{}}
}

func (c *checker) len() int { return len(c.parent) }

func (c *checker) at(i int32) packed { return c.chunks[i>>chunkBits][i&(1<<chunkBits-1)] }

// add stores s unless it is known, and returns its position.
func (c *checker) add(s state, parent int32) (int32, bool) {
	k := s.pack()
	slot := c.slotOf(k)
	if pos := c.table[slot]; pos != 0 {
		return pos - 1, false
	}
	i := int32(c.len())
	// A field that code leaves out would merge states silently: checking
	// a sample of the new states costs little and catches it.
	if i%64 == 0 && k.unpack() != s {
		panic(fmt.Sprintf("state %+v does not survive packing: code every field", s))
	}
	if i&(1<<chunkBits-1) == 0 {
		c.chunks = append(c.chunks, make([]packed, 0, 1<<chunkBits))
	}
	c.chunks[len(c.chunks)-1] = append(c.chunks[len(c.chunks)-1], k)
	c.parent = append(c.parent, parent)
	c.next = append(c.next, unfollowed)
	c.table[slot] = i + 1
	if 2*c.len() > len(c.table) {
		c.grow()
	}
	return i, true
}

// slotOf finds k's slot in the table, or the free slot where it goes.
func (c *checker) slotOf(k packed) int {
	mask := len(c.table) - 1
	for slot := int(k.hash()) & mask; ; slot = (slot + 1) & mask {
		if pos := c.table[slot]; pos == 0 || c.at(pos-1) == k {
			return slot
		}
	}
}

// hash mixes the words of k (a multiply-xorshift, as in splitmix64).
func (k packed) hash() uint64 {
	h := uint64(len(k))
	for _, w := range k {
		h = (h ^ w) * 0x9e3779b97f4a7c15
		h ^= h >> 29
	}
	return h
}

func (c *checker) grow() {
	c.table = make([]int32, 2*len(c.table))
	for i := range int32(c.len()) {
		c.table[c.slotOf(c.at(i))] = i + 1
	}
}

// settle follows the first quiet steps from state i to the quiet state
// they end in, and returns what converged says of it. Every quiet step
// makes progress, so a run that does not end is a fault of the model.
func (c *checker) settle(i int32) *violation {
	if c.settled == nil {
		c.settled = make([]int32, c.len())
		for j := range c.settled {
			c.settled[j] = unsettled
		}
	}
	var path []int32
	end := i
	for {
		if known := c.settled[end]; known != unsettled {
			end = known
			break
		}
		if c.next[end] == quiescent || c.next[end] == unfollowed {
			path = append(path, end)
			if c.next[end] == unfollowed {
				end = unfollowed
			}
			break
		}
		if len(path) > 500 {
			end = noQuietState
			break
		}
		path = append(path, end)
		end = c.next[end]
	}
	for _, j := range path {
		c.settled[j] = end
	}
	switch end {
	case unfollowed:
		return nil
	case noQuietState:
		return violated("liveness: no quiet state", "liveness: the quiet steps go on past 500 without reaching a quiet state")
	}
	v, ok := c.ends[end]
	if !ok {
		v = converged(c.at(end).unpack())
		c.ends[end] = v
	}
	return v
}

// trace replays the path to state i with labels, ending with last.
func (c *checker) trace(i int32, last string) string {
	var path []state
	for ; i >= 0; i = c.parent[i] {
		path = append(path, c.at(i).unpack())
	}
	describing = true
	defer func() { describing = false }()
	var lines []string
	for k := len(path) - 1; k > 0; k-- {
		from, to := path[k], path[k-1]
		for _, st := range append(quiet(from), faults(from)...) {
			if st.next == to {
				lines = append(lines, st.label)
				break
			}
		}
	}
	if last != "" {
		lines = append(lines, last)
	}
	for i := range lines {
		lines[i] = fmt.Sprintf("%3d. %s", i+1, lines[i])
	}
	return strings.Join(lines, "\n")
}

// packed is a state in a few words: the checker keeps millions of them,
// and the state's own fields, a byte each at least, would not fit in
// memory.
type packed [maxObjects + maxGroups]uint64

func (s state) pack() packed {
	var k packed
	c := codec{k: &k}
	s.code(&c)
	c.done()
	return k
}

func (k packed) unpack() state {
	var s state
	s.code(&codec{k: &k, read: true})
	return s
}

// code visits every field of the state with its width in bits, so that
// packing and unpacking cannot disagree on the layout. Each object (a Pod
// and its cached copy) fills one word, each group one, and the rest of the
// state shares the first group's.
func (s *state) code(c *codec) {
	for i := range s.pods {
		p, v := &s.pods[i], &s.cache[i]
		c.bool(&p.exists)
		c.int8(&p.slot, 2)
		c.int8(&p.gen, 3)
		c.phase(&p.phase)
		c.bool(&p.deleting)
		c.int8(&p.annotation, epochBits)
		c.bool(&p.agentUp)
		c.int8(&p.joined, epochBits)
		c.bool(&p.restarting)
		c.int8(&p.worker, epochBits)
		c.bool(&p.signal)
		c.bool(&p.counted)
		c.bool(&p.orphan)
		c.bool(&p.held)
		c.bool(&p.cut)
		c.int8(&p.viewSynced, epochBits)
		c.int8(&p.viewDeprecated, epochBits)
		c.bool(&p.lost)
		c.bool(&p.fenced)
		c.bool(&p.stopping)
		c.bool(&p.fenceKept)
		c.bool(&p.fenceRecorded)
		c.int8(&s.signs[i], epochBits)
		c.bool(&v.exists)
		c.int8(&v.slot, 2)
		c.int8(&v.gen, 3)
		c.phase(&v.phase)
		c.bool(&v.deleting)
		c.int8(&v.annotation, epochBits)
		c.bool(&v.signal)
		c.bool(&v.held)
		c.bool(&v.fenced)
		c.nextWord()
	}
	for slot := range slots {
		c.bool(&s.completed[slot])
		c.bool(&s.completedCache[slot])
		c.int8(&s.made[slot], 3)
		c.bool(&s.finished[slot])
	}
	c.bool(&s.jobSetFailed)
	c.bool(&s.fullRestart)
	c.int8(&s.fullRestarts, 3)
	c.bool(&s.suspended)
	c.bool(&s.jobsSuspended)
	c.bool(&s.preempted)
	c.int8(&s.failures, 3)
	for k := range s.groups {
		if k > 0 {
			c.nextWord()
		}
		s.groups[k].code(c)
	}
}

// code visits the fields of one group.
func (g *group) code(c *codec) {
	c.int8(&g.synced, epochBits)
	c.int8(&g.deprecated, epochBits)
	c.int8(&g.restarts, 3)
	c.bool(&g.regathering)
	c.int8(&g.disruptions, 3)
	c.bool(&g.disrupted)
	for i := range maxObjects {
		b := g.fencedOut&(1<<i) != 0
		c.bool(&b)
		if b {
			g.fencedOut |= 1 << i
		}
	}
	c.int8(&g.faulted, 3)
	c.int8(&g.forgiven, 2)
	c.int8(&g.absorbed, 2)
	c.bool(&g.touched)
}

// epochBits bounds the epochs the model reaches.
const epochBits = 4

// codec packs (or unpacks, when read) fields into consecutive bits.
type codec struct {
	k        *packed
	word, at uint
	read     bool
	// tooWide: the bits of packed values that their fields cannot hold.
	// Checked once a state is packed, so that field stays small enough
	// to inline: packing is most of the search's time.
	tooWide uint64
}

// field packs or unpacks one field. A word that overflows loses bits, and
// add's check that states survive packing finds it.
func (c *codec) field(v uint64, width uint) uint64 {
	mask := uint64(1)<<width - 1
	if c.read {
		v = c.k[c.word] >> c.at & mask
	} else {
		c.tooWide |= v &^ mask
		c.k[c.word] |= (v & mask) << c.at
	}
	c.at += width
	return v
}

// done panics if a value did not fit its field.
func (c *codec) done() {
	if c.tooWide != 0 {
		panic(fmt.Sprintf("a state field holds a value with bits %#x more than its width: widen it", c.tooWide))
	}
}

func (c *codec) nextWord() { c.word, c.at = c.word+1, 0 }

func (c *codec) int8(v *int8, width uint) { *v = int8(c.field(uint64(*v), width)) }

func (c *codec) phase(v *phase) { *v = phase(c.field(uint64(*v), 2)) }

func (c *codec) bool(v *bool) {
	b := uint64(0)
	if *v {
		b = 1
	}
	*v = c.field(b, 1) == 1
}
