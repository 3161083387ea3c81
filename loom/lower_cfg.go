package loom

import (
	"fmt"
	"slices"
	"strings"
)

// Unstructured control flow. A region written as cfg blocks (LOOM.md §2:
// `^label(%arg: T):` blocks ending in cfg.br, cfg.cond_br or a return) is
// rewritten by the shared lowering into the structured ops both backends
// run, so neither needs branches of its own:
//
//   - a conditional branch becomes scf.if; its arms run up to the branch's
//     immediate post-dominator (where divergent invocations reconverge, as
//     on a GPU), whose block arguments become the if's results;
//   - a natural loop (a header and the blocks that branch back to it)
//     becomes scf.while; its whole body runs in the before region and
//     ends in a tuple (kind, header arguments, exit payload; the kind is
//     an i1 flag, true to go on, where the loop has one exit): kind 0
//     continues with the header arguments, kind k leaves through the k-th
//     exit with that exit block's arguments and the loop's values used
//     after it (slots a path leaves unset take the other arms' values,
//     so a value no path changes stays out of the ifs: see chain). A
//     dispatch on kind after the loop continues at the exit;
//   - a branch whose arms never reconverge before the kernel returns (an
//     early exit) puts the returning arms in scf.if, where kernel.return
//     retires their invocations, and continues with the remaining arm in
//     place, so barriers after it see only the invocations still running.
//
// Function bodies and nested regions with several returns are given one
// return block first, so they always reconverge before returning.
// Irreducible control flow (a cycle with two entries), endless loops and
// malformed blocks are errors at their position.

// hasCFG reports whether ops are written as cfg blocks.
func hasCFG(ops []*Op) bool {
	for _, op := range ops {
		if isBlockLabel(op) || strings.HasPrefix(op.Name, "cfg.") {
			return true
		}
	}
	return false
}

// cfgBlock is one block of an unstructured region.
type cfgBlock struct {
	name  string
	pos   Pos
	args  []*Value
	ops   []*Op // the block's ops before its terminator
	term  *Op
	succ  []cfgEdge
	cond  *Value   // cfg.cond_br's condition (succ[0] when true)
	loop  *cfgLoop // the innermost loop holding the block
	head  *cfgLoop // the loop the block heads
	reach bool
}

// cfgEdge is a branch to block to, passing args to its arguments.
type cfgEdge struct {
	to   int
	args []*Value
}

// cfgLoop is a natural loop: a header and the blocks that reach a branch
// back to it without passing it.
type cfgLoop struct {
	header  int
	body    []bool
	members []int // the blocks of body, in block order: walks over a loop stay within it
	parent  *cfgLoop
	exits   []int    // blocks outside the loop it branches to, in block order
	liveOut []*Value // values defined in the loop and used after it
}

// cfgGraph is the state of structuring one region.
type cfgGraph struct {
	l        *lowering
	blocks   []*cfgBlock
	idom     []int
	loops    []*cfgLoop
	defBlock map[*Value]int
	trueV    *Value
	budget   int // ops the output may still hold (bounds tail duplication)
	// uses lists every value use of the reachable blocks in block order
	// (ops, terminator, branch arguments); useAt indexes it by value.
	// Built once, so no loop rescans the region.
	uses  []cfgUse
	useAt map[*Value][]int
	// regionArgs are the region's own arguments (a kernel's launch
	// parameters), in scope everywhere.
	regionArgs []*Value
	pdCache    map[*cfgLoop]map[int]int
	// ctxNodes lists, per loop (nil: the top level), the reachable blocks
	// its structuring sees as nodes: its own blocks and the headers of the
	// loops nested directly in it, in block order.
	ctxNodes map[*cfgLoop][]int
}

// cfgErr is an error at pos about unstructured control flow.
func cfgErr(pos Pos, format string, args ...any) error {
	return &Error{Pos: pos, Class: ErrInvalid, Msg: "cfg: " + fmt.Sprintf(format, args...)}
}

// structureCFG rewrites a region written as cfg blocks into structured ops.
func (l *lowering) structureCFG(r *Region, ops []*Op) ([]*Op, error) {
	g := &cfgGraph{l: l, defBlock: map[*Value]int{}, pdCache: map[*cfgLoop]map[int]int{}, ctxNodes: map[*cfgLoop][]int{}, budget: 8*len(ops) + 256, regionArgs: r.Args}
	if err := g.split(r, ops); err != nil {
		return nil, err
	}
	if err := g.mergeReturns(); err != nil {
		return nil, err
	}
	g.thread()
	if err := g.analyse(); err != nil {
		return nil, err
	}
	pd, err := g.postdoms(nil)
	if err != nil {
		return nil, err
	}
	var out []*Op
	g.at(g.blocks[0].term)
	g.trueV = l.intConst(typeOfBits(1), 1)
	out = append(out, g.take()...)
	if _, err := g.seq(&cfgCtx{ipdom: pd}, 0, nil, len(g.blocks), &out); err != nil {
		return nil, err
	}
	return out, nil
}

// made records regions the structuring built from a region's blocks: the
// block-level checks (checkAsyncStream) ran on the blocks already.
func (l *lowering) made(rs ...*Region) {
	if l.cfgMade == nil {
		l.cfgMade = map[*Region]bool{}
	}
	for _, r := range rs {
		l.cfgMade[r] = true
	}
}

// at makes op the position of the ops emitted next.
func (g *cfgGraph) at(op *Op) { g.l.cur, g.l.out = op, nil }

// take returns the ops emitted since at.
func (g *cfgGraph) take() []*Op {
	o := g.l.out
	g.l.out = nil
	return o
}

// split cuts ops into blocks at their labels and resolves the branches.
func (g *cfgGraph) split(r *Region, ops []*Op) error {
	cur := &cfgBlock{name: "the entry block", pos: r.Pos}
	byName := map[string]int{}
	var labels []*Op
	closeBlock := func(next Pos) error {
		if cur.term == nil {
			if len(g.blocks) == 0 && len(cur.ops) == 0 {
				return nil // the region starts with a label
			}
			return cfgErr(next, "%s does not end in a branch or a return before the next label", cur.name)
		}
		g.blocks = append(g.blocks, cur)
		return nil
	}
	for _, op := range ops {
		if isBlockLabel(op) {
			if err := closeBlock(op.Pos); err != nil {
				return err
			}
			if _, dup := byName[op.Name]; dup {
				return cfgErr(op.Pos, "block %s is defined twice", op.Name)
			}
			cur = &cfgBlock{name: op.Name, pos: op.Pos, args: op.Results}
			byName[op.Name] = len(g.blocks)
			labels = append(labels, op)
			continue
		}
		if cur.term != nil {
			return cfgErr(op.Pos, "%s after the terminator of %s", op.Name, cur.name)
		}
		switch op.Name {
		case "cfg.br", "cfg.cond_br", "kernel.return", "func.return", "scf.yield":
			cur.term = op
		default:
			if strings.HasPrefix(op.Name, "cfg.") {
				return cfgErr(op.Pos, "%s is not a cfg op (cfg has cfg.br and cfg.cond_br)", op.Name)
			}
			cur.ops = append(cur.ops, op)
		}
	}
	if err := closeBlock(r.End); err != nil {
		return err
	}
	if len(g.blocks) == 0 {
		return cfgErr(r.Pos, "region has no blocks")
	}
	if len(g.blocks[0].args) > 0 {
		return cfgErr(g.blocks[0].pos, "the entry block %s takes arguments, which nothing passes", g.blocks[0].name)
	}
	for i, b := range g.blocks {
		for _, v := range b.args {
			g.defBlock[v] = i
		}
		for _, op := range b.ops {
			for _, v := range op.Results {
				g.defBlock[v] = i
			}
		}
		t := b.term
		target := func(w int) (int, error) {
			if w >= len(t.Words) || !strings.HasPrefix(t.Words[w], "^") {
				return 0, cfgErr(t.Pos, "%s needs a successor block", t.Name)
			}
			to, ok := byName[t.Words[w]]
			if !ok {
				return 0, cfgErr(t.Pos, "%s: no block %s in this region", t.Name, t.Words[w])
			}
			return to, nil
		}
		switch t.Name {
		case "cfg.br":
			to, err := target(0)
			if err != nil {
				return err
			}
			args := make([]*Value, len(t.Operands))
			for j, o := range t.Operands {
				args[j] = o.Value
			}
			if err := g.checkArgs(t, to, args); err != nil {
				return err
			}
			b.succ = []cfgEdge{{to: to, args: args}}
		case "cfg.cond_br":
			if len(t.Operands) != 1 || t.Operands[0].Value == nil {
				return cfgErr(t.Pos, "cfg.cond_br takes one i1 condition and no block arguments (branch through a cfg.br block to pass values)")
			}
			c := t.Operands[0].Value
			if c.Type == nil || c.Type.Kind != TypeInt || c.Type.Bits != 1 {
				return cfgErr(t.Operands[0].Pos, "cfg.cond_br condition %%%s is %s, not i1", c.Name, c.Type)
			}
			for w := 0; w < 2; w++ {
				to, err := target(w)
				if err != nil {
					return err
				}
				if err := g.checkArgs(t, to, nil); err != nil {
					return err
				}
				b.succ = append(b.succ, cfgEdge{to: to})
			}
			b.cond = c
		}
	}
	return nil
}

// checkArgs checks a branch passes block to's arguments.
func (g *cfgGraph) checkArgs(t *Op, to int, args []*Value) error {
	want := g.blocks[to].args
	if len(args) != len(want) {
		return cfgErr(t.Pos, "%s passes %d values to %s, which takes %d", t.Name, len(args), g.blocks[to].name, len(want))
	}
	for i, a := range args {
		if a == nil || a.Type == nil {
			return cfgErr(t.Pos, "%s: block argument %d has no known type", t.Name, i)
		}
		if want[i].Type != nil && !sameType(a.Type, want[i].Type) {
			return cfgErr(t.Pos, "%s passes %%%s of type %s to %%%s of %s, of type %s", t.Name, a.Name, a.Type, want[i].Name, g.blocks[to].name, want[i].Type)
		}
	}
	return nil
}

// mergeReturns gives a region with several func.return or scf.yield
// blocks one return block, which the others branch to: a function's
// invocations then reconverge before they return.
func (g *cfgGraph) mergeReturns() error {
	var rets []int
	for i, b := range g.blocks {
		if b.term.Name == "func.return" || b.term.Name == "scf.yield" {
			rets = append(rets, i)
		}
	}
	if len(rets) < 2 {
		return nil
	}
	first := g.blocks[rets[0]].term
	rb := &cfgBlock{name: "the return block", pos: first.Pos}
	t := *first
	t.Operands = nil
	for i, o := range first.Operands {
		if o.Value == nil || o.Value.Type == nil {
			return cfgErr(o.Pos, "%s: returned value %d has no known type", first.Name, i)
		}
		g.l.n++
		v := &Value{Name: fmt.Sprintf("lower.%d", g.l.n), Type: o.Value.Type, Pos: first.Pos}
		rb.args = append(rb.args, v)
		t.Operands = append(t.Operands, &Operand{Pos: o.Pos, Name: v.Name, Value: v})
	}
	rb.term = &t
	ri := len(g.blocks)
	g.blocks = append(g.blocks, rb)
	for _, i := range rets {
		b := g.blocks[i]
		if b.term.Name != first.Name {
			return cfgErr(b.term.Pos, "%s and %s end one region", b.term.Name, first.Name)
		}
		args := make([]*Value, len(b.term.Operands))
		for j, o := range b.term.Operands {
			args[j] = o.Value
		}
		if err := g.checkArgs(b.term, ri, args); err != nil {
			return err
		}
		b.succ = []cfgEdge{{to: ri, args: args}}
	}
	return nil
}

// thread sends branches to a block that only branches on (no ops, no
// arguments) and that nothing else branches to straight to its
// successor: a loop left through such a block and at its header then has
// one exit. The values it passes are defined in blocks dominating it, so
// in scope at its one predecessor; having one predecessor, it heads no
// cycle, so no cycle gains an entry. A conditional branch is threaded
// only through a block passing no values (its edges carry none).
func (g *cfgGraph) thread() {
	preds := make([]int, len(g.blocks))
	for _, b := range g.blocks {
		for _, e := range b.succ {
			preds[e.to]++
		}
	}
	for _, b := range g.blocks {
		for i, e := range b.succ {
			t := g.blocks[e.to]
			if e.to != 0 && preds[e.to] == 1 && len(t.ops) == 0 && len(t.args) == 0 && t.term.Name == "cfg.br" && t.succ[0].to != e.to &&
				(len(b.succ) == 1 || len(t.succ[0].args) == 0) {
				b.succ[i] = t.succ[0]
				preds[e.to] = 0
			}
		}
	}
}

// analyse finds dominators and loops, and refuses irreducible control flow.
func (g *cfgGraph) analyse() error {
	n := len(g.blocks)
	succ := func(v int) []int {
		var out []int
		for _, e := range g.blocks[v].succ {
			out = append(out, e.to)
		}
		return out
	}
	g.idom = idoms(n, 0, succ)
	for i, b := range g.blocks {
		b.reach = g.idom[i] >= 0
	}
	// A retreating edge of a depth-first walk must go to a block that
	// dominates its source: otherwise a cycle has two entries.
	state := make([]int8, n) // 0 new, 1 on the walk, 2 done
	var walk func(v int) error
	var backs [][2]int
	walk = func(v int) error {
		state[v] = 1
		for _, w := range succ(v) {
			switch state[w] {
			case 0:
				if err := walk(w); err != nil {
					return err
				}
			case 1:
				if !g.dominates(w, v) {
					return cfgErr(g.blocks[v].term.Pos, "irreducible control flow: the branch from %s to %s enters a cycle that %s does not head (a cycle with two entries is not supported)", g.blocks[v].name, g.blocks[w].name, g.blocks[w].name)
				}
				backs = append(backs, [2]int{v, w})
			}
		}
		state[v] = 2
		return nil
	}
	if err := walk(0); err != nil {
		return err
	}
	// Natural loops, one per header.
	byHeader := map[int]*cfgLoop{}
	preds := make([][]int, n)
	for v := range g.blocks {
		if !g.blocks[v].reach {
			continue
		}
		for _, w := range succ(v) {
			preds[w] = append(preds[w], v)
		}
	}
	total := 0 // blocks over all loop bodies; a block is in at most maxDepth
	for _, be := range backs {
		latch, h := be[0], be[1]
		lp := byHeader[h]
		if lp == nil {
			lp = &cfgLoop{header: h, body: make([]bool, n), members: []int{h}}
			lp.body[h] = true
			byHeader[h] = lp
			g.loops = append(g.loops, lp)
		}
		stack := []int{latch}
		for len(stack) > 0 {
			v := stack[len(stack)-1]
			stack = stack[:len(stack)-1]
			if lp.body[v] {
				continue
			}
			lp.body[v] = true
			lp.members = append(lp.members, v)
			if total++; total > maxDepth*n {
				return cfgErr(g.blocks[h].pos, "loops nested deeper than %d levels in this region", maxDepth)
			}
			stack = append(stack, preds[v]...)
		}
	}
	for _, lp := range g.loops {
		slices.Sort(lp.members)
	}
	// Innermost loops: the smallest loop holding each block.
	for _, lp := range g.loops {
		g.blocks[lp.header].head = lp
	}
	for _, lp := range g.loops {
		for _, v := range lp.members {
			b := g.blocks[v]
			if b.loop == nil || len(lp.members) < len(b.loop.members) {
				b.loop = lp
			}
			// The parent of a loop: the smallest other loop holding its header.
			if o := b.head; o != nil && o != lp && (o.parent == nil || len(lp.members) < len(o.parent.members)) {
				o.parent = lp
			}
		}
	}
	// Each loop nests its body in an scf.while region: bound the nesting
	// as the parser bounds written regions (the walks over a loop's
	// parents stay short).
	for _, lp := range g.loops {
		depth := 0
		for o := lp; o != nil; o = o.parent {
			if depth++; depth > maxDepth {
				h := g.blocks[lp.header]
				return cfgErr(h.pos, "loops nested deeper than %d levels at %s", maxDepth, h.name)
			}
		}
	}
	for _, lp := range g.loops {
		seen := map[int]bool{}
		for _, v := range lp.members {
			for _, w := range succ(v) {
				if !lp.body[w] && !seen[w] {
					seen[w] = true
					lp.exits = append(lp.exits, w)
				}
			}
		}
	}
	for v, b := range g.blocks {
		if !b.reach {
			continue
		}
		g.ctxNodes[b.loop] = append(g.ctxNodes[b.loop], v)
		if b.head != nil {
			g.ctxNodes[b.head.parent] = append(g.ctxNodes[b.head.parent], v)
		}
	}
	return g.findLiveOuts()
}

// cfgUse is one use of a value, in block blk.
type cfgUse struct {
	blk int
	v   *Value
}

// indexUses fills g.uses and g.useAt.
func (g *cfgGraph) indexUses() {
	g.uses, g.useAt = nil, map[*Value][]int{}
	for u, b := range g.blocks {
		if !b.reach {
			continue
		}
		use := func(v *Value) {
			g.useAt[v] = append(g.useAt[v], len(g.uses))
			g.uses = append(g.uses, cfgUse{u, v})
		}
		for _, op := range b.ops {
			walkUses(op, use)
		}
		walkUses(b.term, use)
		for _, e := range b.succ {
			for _, a := range e.args {
				use(a)
			}
		}
	}
}

// findLiveOuts lists, for every loop, the values defined in it that
// blocks after it use, in the order of those uses. One pass over the
// uses: a use in block u of a value defined in block d is live out of the
// loops holding d but not u, which are the innermost loop of d and its
// parents up to the first that holds u (nesting is bounded by maxDepth).
func (g *cfgGraph) findLiveOuts() error {
	type key struct {
		lp *cfgLoop
		v  *Value
	}
	seen := map[key]bool{}
	g.indexUses()
	for _, us := range g.uses {
		d, ok := g.defBlock[us.v]
		if !ok {
			continue
		}
		for lp := g.blocks[d].loop; lp != nil && !lp.body[us.blk]; lp = lp.parent {
			if k := (key{lp, us.v}); !seen[k] {
				seen[k] = true
				lp.liveOut = append(lp.liveOut, us.v)
			}
		}
	}
	for _, lp := range g.loops {
		for _, v := range lp.liveOut {
			if v.Type == nil {
				return cfgErr(v.Pos, "%%%s is used after the loop at %s but has no known type", v.Name, g.blocks[lp.header].name)
			}
		}
	}
	return nil
}

// walkUses calls f with every value op and its regions use.
func walkUses(op *Op, f func(*Value)) {
	for _, o := range op.Operands {
		if o.Value != nil {
			f(o.Value)
		}
	}
	for _, r := range op.Regions {
		for _, in := range r.Ops {
			walkUses(in, f)
		}
	}
}

// dominates reports whether block a dominates block b.
func (g *cfgGraph) dominates(a, b int) bool {
	for {
		if a == b {
			return true
		}
		p := g.idom[b]
		if p == b || p < 0 {
			return false
		}
		b = p
	}
}

// idoms computes immediate dominators of the graph next spans from root
// (Cooper, Harvey and Kennedy); unreachable nodes get -1, root itself.
func idoms(n, root int, next func(int) []int) []int {
	num := make([]int, n)
	for i := range num {
		num[i] = -1
	}
	var order []int
	var dfs func(v int)
	seen := make([]bool, n)
	dfs = func(v int) {
		seen[v] = true
		for _, w := range next(v) {
			if !seen[w] {
				dfs(w)
			}
		}
		order = append(order, v)
	}
	dfs(root)
	// Reverse postorder numbers.
	for i, v := range order {
		num[v] = len(order) - 1 - i
	}
	preds := make([][]int, n)
	for _, v := range order {
		for _, w := range next(v) {
			preds[w] = append(preds[w], v)
		}
	}
	idom := make([]int, n)
	for i := range idom {
		idom[i] = -1
	}
	idom[root] = root
	for changed := true; changed; {
		changed = false
		for i := len(order) - 1; i >= 0; i-- {
			v := order[i]
			if v == root {
				continue
			}
			nd := -1
			for _, p := range preds[v] {
				if idom[p] < 0 {
					continue
				}
				if nd < 0 {
					nd = p
					continue
				}
				a, b := p, nd
				for a != b {
					for num[a] > num[b] {
						a = idom[a]
					}
					for num[b] > num[a] {
						b = idom[b]
					}
				}
				nd = a
			}
			if nd != idom[v] {
				idom[v], changed = nd, true
			}
		}
	}
	return idom
}

// cfgCtx is the loop being structured (nil at the region's top level) and
// the tuple its body ends in.
type cfgCtx struct {
	loop    *cfgLoop
	ipdom   map[int]int
	hargs   []*Value
	tuple   []*Type
	exitAt  []int    // first tuple slot of each exit's block arguments
	live    []int    // the tuple slot of each live-out value
	dummies []*Value // stand-ins for payload slots a path does not set
	kinds   []*Value // the kind constants, made before the loop
	// simple is set for a loop whose only exit is its header's branch
	// (whileLoop): a path through the body ends in the header's
	// arguments alone.
	simple bool
}

// collapse is the node of block t in the graph of loop lp: t itself, or
// the header of the loop nested directly in lp that holds t.
func (g *cfgGraph) collapse(t int, lp *cfgLoop) int {
	in := g.blocks[t].loop
	if in == lp {
		return t
	}
	for in.parent != lp {
		in = in.parent
	}
	return in.header
}

// postdoms computes the immediate post-dominators of the graph of lp's
// body (or of the top level): nested loops collapse to their headers,
// and branches back to lp's header, out of lp, and returns go to one end
// node, len(blocks).
func (g *cfgGraph) postdoms(lp *cfgLoop) (map[int]int, error) {
	if p, ok := g.pdCache[lp]; ok {
		return p, nil
	}
	// Only lp's own blocks and its child loops' headers take part,
	// numbered locally: no loop's analysis spans the whole region.
	nodes := g.ctxNodes[lp]
	end := len(nodes)
	local := make(map[int]int, len(nodes))
	for i, v := range nodes {
		local[v] = i
	}
	preds := make([][]int, end+1)
	for i, v := range nodes {
		b := g.blocks[v]
		var targets []int
		if b.head != nil && b.head != lp {
			targets = b.head.exits
		} else {
			for _, e := range b.succ {
				targets = append(targets, e.to)
			}
		}
		if len(targets) == 0 {
			preds[end] = append(preds[end], i)
		}
		for _, t := range targets {
			w := end
			if lp == nil || (t != lp.header && lp.body[t]) {
				w = local[g.collapse(t, lp)]
			}
			preds[w] = append(preds[w], i)
		}
	}
	lpd := idoms(end+1, end, func(v int) []int { return preds[v] })
	pd := make(map[int]int, len(nodes))
	for i, v := range nodes {
		switch j := lpd[i]; {
		case j < 0:
			b := g.blocks[v]
			return nil, cfgErr(b.pos, "%s is in a loop that never exits (no path from it reaches a return)", b.name)
		case j == end:
			pd[v] = len(g.blocks)
		default:
			pd[v] = nodes[j]
		}
	}
	g.pdCache[lp] = pd
	return pd, nil
}

// spend charges k output ops against the duplication budget.
func (g *cfgGraph) spend(k int, pos Pos) error {
	g.budget -= k
	if g.budget < 0 {
		return cfgErr(pos, "structuring this region would copy too many blocks (branches whose arms share blocks but do not reconverge before a return)")
	}
	return nil
}

// seq emits block b, entered with values in for its arguments, and what
// follows it, up to block stop (or the end node len(blocks)). It returns
// the values control carries to stop: stop's arguments, a loop's tuple,
// or nothing at the top level's end.
func (g *cfgGraph) seq(ctx *cfgCtx, b int, in []*Value, stop int, out *[]*Op) ([]*Value, error) {
	bl := g.blocks[b]
	if bl.head != nil && bl.head != ctx.loop {
		return g.loop(ctx, b, in, stop, out)
	}
	if in != nil {
		g.at(bl.term)
		for i, a := range bl.args {
			g.copyTo(a, in[i])
		}
		*out = append(*out, g.take()...)
	}
	if err := g.spend(len(bl.ops)+1, bl.pos); err != nil {
		return nil, err
	}
	*out = append(*out, bl.ops...)
	switch len(bl.succ) {
	case 0:
		*out = append(*out, bl.term)
		return nil, nil
	case 1:
		return g.edge(ctx, bl.succ[0], stop, out)
	}
	arms := []cfgArm{{cond: bl.cond, e: bl.succ[0]}, {cond: bl.cond, neg: true, e: bl.succ[1]}}
	return g.branch(ctx, b, bl.term, arms, stop, out)
}

// copyTo defines dst as a copy of v.
func (g *cfgGraph) copyTo(dst, v *Value) {
	t := dst.Type
	if t == nil {
		t = v.Type
	}
	op := &Op{Pos: g.l.cur.Pos, End: g.l.cur.End, Name: "scf.select", Types: []*Type{t}, Results: []*Value{dst}}
	for _, a := range []*Value{g.trueV, v, v} {
		op.Operands = append(op.Operands, &Operand{Pos: g.l.cur.Pos, Name: a.Name, Value: a})
	}
	g.l.out = append(g.l.out, op)
}

// edge follows a branch: into the stop block, back to the loop's header,
// out of the loop, or on to the next block.
func (g *cfgGraph) edge(ctx *cfgCtx, e cfgEdge, stop int, out *[]*Op) ([]*Value, error) {
	if e.to == stop {
		return e.args, nil
	}
	if lp := ctx.loop; lp != nil {
		if e.to == lp.header {
			if ctx.simple {
				return e.args, nil
			}
			return g.tuple(ctx, 0, e), nil
		}
		if !lp.body[e.to] {
			for k, x := range lp.exits {
				if x == e.to {
					return g.tuple(ctx, k+1, e), nil
				}
			}
		}
	}
	return g.seq(ctx, e.to, e.args, stop, out)
}

// tuple is the end of one path through a loop body: kind 0 continues
// with e's arguments for the header, kind k leaves through exit k-1 with
// e's arguments in that exit's slots, the trip's header arguments that
// are used after the loop, and the loop's values used after it that this
// path defined. Slots the path does not set are nil (chain and loop
// choose stand-ins).
func (g *cfgGraph) tuple(ctx *cfgCtx, kind int, e cfgEdge) []*Value {
	vals := make([]*Value, len(ctx.tuple))
	vals[0] = ctx.kinds[kind]
	if kind == 0 {
		copy(vals[1:], e.args)
		return vals
	}
	copy(vals[ctx.exitAt[kind-1]:], e.args)
	for i, v := range ctx.loop.liveOut {
		if s := ctx.live[i]; s <= len(ctx.hargs) || g.dominates(g.defBlock[v], e.to) {
			vals[s] = v
		}
	}
	return vals
}

// cfgArm is one way out of a branch: taken where cond (negated for neg)
// holds.
type cfgArm struct {
	cond *Value
	neg  bool
	e    cfgEdge
}

// branch emits a branch of block (or collapsed loop) b between arms.
func (g *cfgGraph) branch(ctx *cfgCtx, b int, at *Op, arms []cfgArm, stop int, out *[]*Op) ([]*Value, error) {
	end := len(g.blocks)
	j := ctx.ipdom[b]
	switch {
	case j != end:
		jb := g.blocks[j]
		types := make([]*Type, len(jb.args))
		results := jb.args
		for i, a := range jb.args {
			types[i] = a.Type
		}
		// The results are j's arguments, unless j is reached again later
		// or heads a loop, which takes them as initial values.
		var in []*Value
		if j == stop || (jb.head != nil && jb.head != ctx.loop) {
			results = g.fresh(types)
			in = results
		}
		if _, err := g.chain(ctx, at, arms, j, types, results, out); err != nil {
			return nil, err
		}
		if j == stop {
			return results, nil
		}
		return g.seq(ctx, j, in, stop, out)
	case ctx.loop != nil:
		return g.chain(ctx, at, arms, end, ctx.tuple, nil, out)
	}
	// No join before the kernel returns: every arm ends in a return. The
	// arms but one run in scf.if, where their invocations retire; the
	// one left runs after them in place. Keep in place an arm that holds
	// a barrier or collective, so that it meets only the invocations
	// still running, else the arm with the most ops (the work, rather
	// than the early exit).
	keep, best := len(arms)-1, -1
	for i := range arms {
		conv, ops := g.reachFrom(arms[i].e.to)
		if conv {
			keep = i
			break
		}
		if ops > best {
			keep, best = i, ops
		}
	}
	for i, a := range arms {
		if i == keep {
			continue
		}
		var body []*Op
		if _, err := g.edge(ctx, a.e, end, &body); err != nil {
			return nil, err
		}
		g.at(at)
		g.emitIf(a, body, nil, nil, nil)
		*out = append(*out, g.take()...)
	}
	return g.edge(ctx, arms[keep].e, end, out)
}

// chain emits arms as nested scf.if ops whose regions run to stop and
// yield the values control carries there as results, and returns those
// values. With results nil the arms end in a loop's tuple (loop), where
// a slot no arm sets stays nil (a stand-in is chosen where it meets a
// set one), a slot every arm sets to one value defined before the if is
// that value rather than a result, and arms without ops become
// scf.select: a value that does not depend on the path (a loop counter
// left unchanged by an early exit) stays out of the if, so the CPU
// executor keeps it uniform, and an if that only picks values costs one
// select per slot.
func (g *cfgGraph) chain(ctx *cfgCtx, at *Op, arms []cfgArm, stop int, types []*Type, results []*Value, out *[]*Op) ([]*Value, error) {
	tupleMode := ctx.loop != nil && stop == len(g.blocks)
	region := func(arms []cfgArm) ([]*Op, []*Value, error) {
		var body []*Op
		if len(arms) == 1 {
			v, err := g.edge(ctx, arms[0].e, stop, &body)
			return body, v, err
		}
		var vals []*Value
		if !tupleMode {
			vals = g.fresh(types)
		}

		vals, err := g.chain(ctx, at, arms, stop, types, vals, &body)
		return body, vals, err
	}
	first, fv, err := region(arms[:1])
	if err != nil {
		return nil, err
	}
	rest, rv, err := region(arms[1:])
	if err != nil {
		return nil, err
	}
	yield := func(vals []*Value, slots []int) *Op {
		y := &Op{Pos: at.Pos, End: at.End, Name: "scf.yield"}
		for _, i := range slots {
			v := vals[i]
			y.Types = append(y.Types, types[i])
			y.Operands = append(y.Operands, &Operand{Pos: at.Pos, Name: v.Name, Value: v})
		}
		return y
	}
	g.at(at)
	if !tupleMode && len(first) == 0 && len(rest) == 0 {
		for i, r := range results {
			x, y := fv[i], rv[i]
			if arms[0].neg {
				x, y = y, x
			}
			g.sel(arms[0].cond, x, y, r)
		}
		*out = append(*out, g.take()...)
		return results, nil
	}
	if !tupleMode {
		all := make([]int, len(types))
		for i := range all {
			all[i] = i
		}
		g.emitIf(arms[0], append(first, yield(fv, all)), append(rest, yield(rv, all)), types, results)
		*out = append(*out, g.take()...)
		return results, nil
	}
	vals := make([]*Value, len(types))
	var kept []int
	for i := range types {
		a, b := fv[i], rv[i]
		switch {
		case a == nil && b == nil:
		case (a == nil || b == nil || a == b) && (a == nil || !definedIn(first, a)) && (b == nil || !definedIn(rest, b)):
			vals[i] = a
			if a == nil {
				vals[i] = b
			}
		default:
			if a == nil {
				fv[i] = ctx.standIn(i)
			}
			if b == nil {
				rv[i] = ctx.standIn(i)
			}
			kept = append(kept, i)
		}
	}
	if len(first) == 0 && len(rest) == 0 {
		for _, i := range kept {
			x, y := fv[i], rv[i]
			if arms[0].neg {
				x, y = y, x
			}
			vals[i] = g.sel(arms[0].cond, x, y, nil)
		}
		*out = append(*out, g.take()...)
		return vals, nil
	}
	kt := make([]*Type, len(kept))
	for j, i := range kept {
		kt[j] = types[i]
	}
	res := g.fresh(kt)
	for j, i := range kept {
		vals[i] = res[j]
	}
	if len(kept) == 0 {
		kt, res = nil, nil
	}
	g.emitIf(arms[0], append(first, yield(fv, kept)), append(rest, yield(rv, kept)), kt, res)
	*out = append(*out, g.take()...)
	return vals, nil
}

// definedIn reports whether ops or their regions define v.
func definedIn(ops []*Op, v *Value) bool {
	for _, op := range ops {
		for _, r := range op.Results {
			if r == v {
				return true
			}
		}
		for _, r := range op.Regions {
			for _, a := range r.Args {
				if a == v {
					return true
				}
			}
			if definedIn(r.Ops, v) {
				return true
			}
		}
	}
	return false
}

// standIn is the value a path that does not set tuple slot i carries
// there: the trip's own header argument, or the slot's zero stand-in.
func (ctx *cfgCtx) standIn(i int) *Value {
	if i >= 1 && i <= len(ctx.hargs) {
		return ctx.hargs[i-1]
	}
	return ctx.dummies[i]
}

// sel emits scf.select of x where c holds and y elsewhere, defining r
// (a new value if nil).
func (g *cfgGraph) sel(c, x, y, r *Value) *Value {
	if r == nil {
		r = g.fresh([]*Type{x.Type})[0]
	}
	t := r.Type
	if t == nil {
		t = x.Type
	}
	op := &Op{Pos: g.l.cur.Pos, End: g.l.cur.End, Name: "scf.select", Types: []*Type{t}, Results: []*Value{r}}
	for _, a := range []*Value{c, x, y} {
		op.Operands = append(op.Operands, &Operand{Pos: g.l.cur.Pos, Name: a.Name, Value: a})
	}
	g.l.out = append(g.l.out, op)
	return r
}

// emitIf emits `scf.if` running body where arm a is taken and other
// elsewhere.
func (g *cfgGraph) emitIf(a cfgArm, body, other []*Op, types []*Type, results []*Value) {
	pos, end := g.l.cur.Pos, g.l.cur.End
	then := &Region{Pos: pos, End: end, Ops: body}
	els := &Region{Pos: pos, End: end, Label: "else", Ops: other}
	if a.neg {
		then, els = els, then
	}
	if len(then.Ops) == 0 {
		then.Ops = []*Op{{Pos: pos, End: end, Name: "scf.yield"}}
	}
	if len(els.Ops) == 0 {
		els.Ops = []*Op{{Pos: pos, End: end, Name: "scf.yield"}}
	}
	then.Label = ""
	els.Label = "else"
	g.l.made(then, els)
	op := &Op{Pos: pos, End: end, Name: "scf.if", ResultTypes: types, Results: results, Regions: []*Region{then, els},
		Operands: []*Operand{{Pos: pos, Name: a.cond.Name, Value: a.cond}}}
	g.l.out = append(g.l.out, op)
}

// fresh makes new values of the given types.
func (g *cfgGraph) fresh(types []*Type) []*Value {
	out := make([]*Value, len(types))
	for i, t := range types {
		g.l.n++
		out[i] = &Value{Name: fmt.Sprintf("lower.%d", g.l.n), Type: t, Pos: g.l.cur.Pos}
	}
	return out
}

// loop emits the loop headed by block h, entered with inits, as scf.while,
// and dispatches to the exit it left through.
func (g *cfgGraph) loop(parent *cfgCtx, h int, inits []*Value, stop int, out *[]*Op) ([]*Value, error) {
	hb := g.blocks[h]
	lp := hb.head
	pd, err := g.postdoms(lp)
	if err != nil {
		return nil, err
	}
	if e, body, neg, ok := g.whileShape(lp); ok {
		return g.whileLoop(parent, h, e, body, neg, pd, inits, stop, out)
	}
	ctx := &cfgCtx{loop: lp, ipdom: pd, hargs: hb.args}
	// The kind: with one exit, an i1 that is itself the condition to go
	// on (true continues), else an i32 compared with 0.
	i32 := typeOfBits(32)
	flag := len(lp.exits) == 1
	if flag {
		ctx.tuple = []*Type{typeOfBits(1)}
	} else {
		ctx.tuple = []*Type{i32}
	}
	for _, a := range hb.args {
		ctx.tuple = append(ctx.tuple, a.Type)
	}
	for _, x := range lp.exits {
		ctx.exitAt = append(ctx.exitAt, len(ctx.tuple))
		for _, a := range g.blocks[x].args {
			ctx.tuple = append(ctx.tuple, a.Type)
		}
	}
	// A header argument leaves in its own slot, which exits fill with
	// the trip's arguments.
	for _, v := range lp.liveOut {
		slot := len(ctx.tuple)
		for j, a := range hb.args {
			if a == v {
				slot = 1 + j
			}
		}
		if slot == len(ctx.tuple) {
			ctx.tuple = append(ctx.tuple, v.Type)
		}
		ctx.live = append(ctx.live, slot)
	}
	// Stand-ins for the payload a path leaves unset, made before the loop.
	g.at(hb.term)
	ctx.dummies = make([]*Value, len(ctx.tuple))
	for i := 1 + len(hb.args); i < len(ctx.tuple); i++ {
		d, err := g.zero(ctx.tuple[i], h)
		if err != nil {
			return nil, err
		}
		ctx.dummies[i] = d
	}
	if flag {
		ctx.kinds = []*Value{g.trueV, g.l.intConst(typeOfBits(1), 0)}
	} else {
		for k := 0; k <= len(lp.exits); k++ {
			ctx.kinds = append(ctx.kinds, g.l.intConst(i32, int64(k)))
		}
	}
	*out = append(*out, g.take()...)
	var before []*Op
	vals, err := g.seq(ctx, h, nil, len(g.blocks), &before)
	if err != nil {
		return nil, err
	}
	for i, v := range vals {
		if v == nil {
			vals[i] = ctx.standIn(i)
		}
	}
	g.at(hb.term)
	cont := vals[0]
	if !flag {
		cont = g.l.cmp("cmpi", "eq", vals[0], ctx.kinds[0])
	}
	// The loop forwards the tuple, less the kind where it is the flag
	// (read by nothing after the loop); slot i is then fwd[i-from].
	from := 0
	if flag {
		from = 1
	}
	ft := ctx.tuple[from:]
	cond := &Op{Pos: hb.pos, End: hb.pos, Name: "scf.condition", Types: append([]*Type{cont.Type}, ft...)}
	for _, v := range append([]*Value{cont}, vals[from:]...) {
		cond.Operands = append(cond.Operands, &Operand{Pos: hb.pos, Name: v.Name, Value: v})
	}
	before = append(before, g.take()...)
	before = append(before, cond)
	aargs := g.fresh(ft)
	y := &Op{Pos: hb.pos, End: hb.pos, Name: "scf.yield", Types: ctx.tuple[1 : 1+len(hb.args)]}
	for _, v := range aargs[1-from : 1-from+len(hb.args)] {
		y.Operands = append(y.Operands, &Operand{Pos: hb.pos, Name: v.Name, Value: v})
	}
	fres := g.fresh(ft)
	results := append(make([]*Value, from), fres...)
	w := &Op{Pos: hb.pos, End: hb.pos, Name: "scf.while", ResultTypes: ft, Results: fres,
		Regions: []*Region{{Pos: hb.pos, End: hb.pos, Args: hb.args, Ops: before}, {Pos: hb.pos, End: hb.pos, Label: "do", Args: aargs, Ops: []*Op{y}}}}
	g.l.made(w.Regions...)
	for _, v := range inits {
		w.Operands = append(w.Operands, &Operand{Pos: hb.pos, Name: v.Name, Value: v})
	}
	*out = append(*out, w)
	// The loop's values used after it, as they were when it left.
	g.at(hb.term)
	for i, v := range lp.liveOut {
		g.copyTo(v, results[ctx.live[i]])
	}
	*out = append(*out, g.take()...)
	if len(lp.exits) == 0 {
		return nil, cfgErr(hb.pos, "the loop at %s never exits", hb.name)
	}
	arms := make([]cfgArm, len(lp.exits))
	for k, x := range lp.exits {
		n := len(g.blocks[x].args)
		arms[k] = cfgArm{e: cfgEdge{to: x, args: results[ctx.exitAt[k] : ctx.exitAt[k]+n]}}
	}
	if len(arms) == 1 {
		return g.edge(parent, arms[0].e, stop, out)
	}
	g.at(hb.term)
	for k := range arms {
		arms[k].cond = g.l.cmp("cmpi", "eq", results[0], g.l.intConst(i32, int64(k+1)))
	}
	*out = append(*out, g.take()...)
	return g.branch(parent, h, hb.term, arms, stop, out)
}

// whileShape reports whether lp leaves through one conditional branch
// only, in block e, which every trip passes (it dominates the branches
// back to the header); body is e's arm that stays in the loop (the true
// one unless neg).
func (g *cfgGraph) whileShape(lp *cfgLoop) (e, body int, neg, ok bool) {
	e = -1
	for _, v := range lp.members {
		for _, s := range g.blocks[v].succ {
			if !lp.body[s.to] {
				if e >= 0 {
					return 0, 0, false, false // a second exit edge
				}
				e = v
			}
		}
	}
	if e < 0 || len(g.blocks[e].succ) != 2 {
		return 0, 0, false, false
	}
	eb := g.blocks[e]
	for _, v := range lp.members {
		for _, s := range g.blocks[v].succ {
			if s.to == lp.header && !g.dominates(e, v) {
				return 0, 0, false, false
			}
		}
	}
	if lp.body[eb.succ[0].to] {
		return e, eb.succ[0].to, false, true
	}
	return e, eb.succ[1].to, true, true
}

// whileLoop emits a loop of whileShape as a plain scf.while: the blocks
// from the header to the exiting block e and e's condition in the first
// region, which forwards the header's arguments and the values defined
// there that later blocks read to the rest of the body in the second;
// the body's paths end in the header's arguments. The second region's
// arguments are the forwarded values themselves, so the body reads them
// unchanged.
func (g *cfgGraph) whileLoop(parent *cfgCtx, h, e, body int, neg bool, pd map[int]int, inits []*Value, stop int, out *[]*Op) ([]*Value, error) {
	hb, eb := g.blocks[h], g.blocks[e]
	lp := hb.head
	ctx := &cfgCtx{loop: lp, ipdom: pd, hargs: hb.args, simple: true}
	for _, a := range hb.args {
		ctx.tuple = append(ctx.tuple, a.Type)
	}
	// The first region: the blocks reached from the header before e.
	first := make([]bool, len(g.blocks))
	var mark func(v int)
	mark = func(v int) {
		if first[v] {
			return
		}
		first[v] = true
		if v == e {
			return
		}
		for _, s := range g.blocks[v].succ {
			if lp.body[s.to] && s.to != h {
				mark(s.to)
			}
		}
	}
	mark(h)
	// Forwarded: the header's arguments and the values of the blocks
	// dominating e that blocks outside the first region read.
	fwd := append([]*Value(nil), hb.args...)
	defined := map[*Value]bool{}
	for d := e; ; d = g.idom[d] {
		if d != h {
			for _, v := range g.blocks[d].args {
				defined[v] = true
			}
		}
		for _, op := range g.blocks[d].ops {
			for _, v := range op.Results {
				defined[v] = true
			}
		}
		if d == h {
			break
		}
	}
	// In the order of their first use outside the first region.
	var firstUse []int
	for x := range defined {
		for _, i := range g.useAt[x] {
			if !first[g.uses[i].blk] {
				firstUse = append(firstUse, i)
				break
			}
		}
	}
	slices.Sort(firstUse)
	for _, i := range firstUse {
		fwd = append(fwd, g.uses[i].v)
	}
	types := make([]*Type, len(fwd))
	for i, v := range fwd {
		if v.Type == nil {
			return nil, cfgErr(v.Pos, "%%%s is used after the header of the loop at %s but has no known type", v.Name, hb.name)
		}
		types[i] = v.Type
	}
	var before []*Op
	if e != h {
		in, err := g.seq(ctx, h, nil, e, &before)
		if err != nil {
			return nil, err
		}
		g.at(eb.term)
		for i, a := range eb.args {
			g.copyTo(a, in[i])
		}
		before = append(before, g.take()...)
	}
	if err := g.spend(len(eb.ops)+1, eb.pos); err != nil {
		return nil, err
	}
	before = append(before, eb.ops...)
	g.at(eb.term)
	c := eb.cond
	if neg {
		c = g.l.bin("xori", c, g.trueV)
	}
	before = append(before, g.take()...)
	cond := &Op{Pos: eb.term.Pos, End: eb.term.End, Name: "scf.condition", Types: append([]*Type{c.Type}, types...)}
	for _, v := range append([]*Value{c}, fwd...) {
		cond.Operands = append(cond.Operands, &Operand{Pos: eb.term.Pos, Name: v.Name, Value: v})
	}
	before = append(before, cond)
	var do []*Op
	var vals []*Value
	if body != h {
		var err error
		if vals, err = g.seq(ctx, body, nil, len(g.blocks), &do); err != nil {
			return nil, err
		}
	}
	y := &Op{Pos: eb.term.Pos, End: eb.term.End, Name: "scf.yield", Types: ctx.tuple}
	for _, v := range vals {
		y.Operands = append(y.Operands, &Operand{Pos: eb.term.Pos, Name: v.Name, Value: v})
	}
	do = append(do, y)
	g.at(eb.term)
	results := g.fresh(types)
	w := &Op{Pos: hb.pos, End: hb.pos, Name: "scf.while", ResultTypes: types, Results: results,
		Regions: []*Region{{Pos: hb.pos, End: hb.pos, Args: hb.args, Ops: before}, {Pos: hb.pos, End: hb.pos, Label: "do", Args: fwd, Ops: do}}}
	g.l.made(w.Regions...)
	for _, v := range inits {
		w.Operands = append(w.Operands, &Operand{Pos: hb.pos, Name: v.Name, Value: v})
	}
	*out = append(*out, w)
	// Values of the last trip read after the loop.
	g.at(eb.term)
	for i, v := range fwd {
		for _, lv := range lp.liveOut {
			if lv == v {
				g.copyTo(v, results[i])
			}
		}
	}
	*out = append(*out, g.take()...)
	return g.edge(parent, cfgEdge{to: lp.exits[0]}, stop, out)
}

// zero is a stand-in value of type t for paths that leave a loop without
// setting it: a zero constant, or for other types (views, buffers) a value
// of that type in scope at the loop's header h: a region argument, or one
// defined in a block dominating h.
func (g *cfgGraph) zero(t *Type, h int) (*Value, error) {
	switch {
	case t.Kind == TypeIndex || t.Kind == TypeOffset:
		g.l.emit("index.constant", "", nil, []*Type{t}, nil, t)
		v := g.l.out[len(g.l.out)-1]
		v.Literal = &Literal{Kind: LitInt, Int: 0, Text: "0"}
		return v.Results[0], nil
	case t.Kind == TypeFloat || (t.Kind == TypeVector && t.Elem.Kind == TypeFloat):
		return g.l.floatConst(t, 0), nil
	case t.Kind == TypeInt || (t.Kind == TypeVector && (t.Elem.Kind == TypeInt || t.Elem.Kind == TypeIndex)):
		return g.l.intConst(t, 0), nil
	}
	same := func(v *Value) bool { return v.Type != nil && sameType(v.Type, t) }
	for _, a := range g.regionArgs {
		if same(a) {
			return a, nil
		}
	}
	for d := g.idom[h]; h != 0 && d >= 0; d = g.idom[d] {
		b := g.blocks[d]
		for _, v := range b.args {
			if same(v) {
				return v, nil
			}
		}
		for _, op := range b.ops {
			for _, v := range op.Results {
				if same(v) {
					return v, nil
				}
			}
		}
		if d == 0 {
			break
		}
	}
	hb := g.blocks[h]
	return nil, cfgErr(hb.pos, "a value of type %s leaves the loop at %s on some exits only; the shared structuring has no stand-in of that type in scope for the others", t, hb.name)
}

// reachFrom reports whether a block reachable from block b holds a
// barrier or a collective, and how many ops those blocks hold.
func (g *cfgGraph) reachFrom(b int) (convergent bool, ops int) {
	seen := map[int]bool{}
	var visit func(v int)
	visit = func(v int) {
		if seen[v] {
			return
		}
		seen[v] = true
		ops += len(g.blocks[v].ops)
		for _, op := range g.blocks[v].ops {
			convergent = convergent || hasConvergent(op)
		}
		for _, e := range g.blocks[v].succ {
			visit(e.to)
		}
	}
	visit(b)
	return convergent, ops
}

// hasConvergent reports whether op or an op nested in it is a barrier or
// a subgroup or workgroup collective.
func hasConvergent(op *Op) bool {
	n := op.Name
	switch {
	case n == "kernel.barrier", n == "vector.mma":
		return true
	case strings.HasPrefix(n, "kernel.subgroup.") || strings.HasPrefix(n, "kernel.workgroup."):
		for _, s := range []string{"reduce", "scan", "vote", "ballot", "shuffle", "broadcast", "match", "active"} {
			if strings.Contains(n, s) {
				return true
			}
		}
	}
	for _, r := range op.Regions {
		for _, in := range r.Ops {
			if hasConvergent(in) {
				return true
			}
		}
	}
	return false
}
