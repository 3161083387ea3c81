package loom

import (
	"os"
	"path/filepath"
	"testing"
)

// The files of testdata/frontend hold one construct of real Loom each that
// the front end once refused (found by internal/corpusrate): every one must
// parse, resolve every operand, and be analysed.

// frontendUse says that the use of %Name on line UseLine resolves to the
// value defined on DefLine.
type frontendUse struct {
	File             string
	Name             string
	UseLine, DefLine int
}

var frontendUses = []frontendUse{
	// A block argument is defined by its label; a successor's arguments
	// are uses.
	{"cfg_blocks.loom", "winner", 12, 11},
	{"cfg_blocks.loom", "a", 8, 4},
	{"cfg_blocks.loom", "b", 10, 4},
	{"cfg_blocks.loom", "i", 20, 19},
	{"cfg_blocks.loom", "next", 24, 23},
	{"cfg_blocks.loom", "lay", 34, 33}, // in the type of a later argument
	{"cfg_blocks.loom", "w", 34, 33},
	// A result type names a co-result of its op.
	{"result_type_refs.loom", "lay", 4, 4},
	{"result_type_refs.loom", "l2", 17, 17},
	{"result_type_refs.loom", "v2", 20, 17},
	// iter_args(%acc: T) uses the parameter; do(…) defines region args.
	{"iter_args_uses.loom", "acc", 6, 5},
	{"iter_args_uses.loom", "running", 7, 6},
}

// TestFrontendBranchAccess: a write through a block argument is not
// missed (the successor's operands once were dropped, and the buffer
// inferred untouched).
func TestFrontendBranchAccess(t *testing.T) {
	src, err := os.ReadFile("testdata/frontend/cfg_branch_buffer.loom")
	if err != nil {
		t.Fatal(err)
	}
	m, err := ParseFile("cfg_branch_buffer.loom", src)
	if err != nil {
		t.Fatal(err)
	}
	p, err := NewProgram(m)
	if err != nil {
		t.Fatal(err)
	}
	k, err := p.Kernel("k")
	if err != nil {
		t.Fatal(err)
	}
	got := map[string]Access{}
	for _, a := range p.Access(k) {
		got[a.Param.Name] = a.Access
	}
	if got["src"] != 0 || got["dst"] != AccessReadWrite {
		t.Errorf("access %v; want src none, dst read_write", got)
	}
}

func TestFrontendFiles(t *testing.T) {
	files, err := filepath.Glob("testdata/frontend/*.loom")
	if err != nil || len(files) == 0 {
		t.Fatalf("no testdata/frontend files: %v", err)
	}
	for _, path := range files {
		t.Run(filepath.Base(path), func(t *testing.T) {
			src, err := os.ReadFile(path)
			if err != nil {
				t.Fatal(err)
			}
			m, err := ParseFile(path, src)
			if err != nil {
				t.Fatalf("parse: %v", err)
			}
			p, err := NewProgram(m)
			if err != nil {
				t.Fatalf("program: %v", err)
			}
			for _, k := range p.Kernels() {
				p.Access(k)
				if _, err := p.LaunchExprs(k); err != nil {
					t.Errorf("launch config of %s: %v", k.Export, err)
				}
				p.Extents(k)
			}
			uses := map[[2]any]*Operand{} // (name, line) → operand
			var walk func(ops []*Op)
			walk = func(ops []*Op) {
				for _, op := range ops {
					var ts []*Type
					ts = append(append(ts, op.Types...), op.ResultTypes...)
					for _, r := range op.Results {
						ts = append(ts, r.Type)
					}
					for _, ty := range ts {
						if ty == nil {
							continue
						}
						for _, d := range ty.Dims {
							if d.Value != nil {
								uses[[2]any{d.Value.Name, d.Value.Pos.Line}] = d.Value
							}
						}
						if ty.LayoutValue != nil {
							uses[[2]any{ty.LayoutValue.Name, ty.LayoutValue.Pos.Line}] = ty.LayoutValue
						}
					}
					for _, o := range op.Operands {
						if o.Lit == nil && o.Value == nil {
							t.Errorf("%s: %s: operand %%%s unresolved", o.Pos, op.Name, o.Name)
						}
						uses[[2]any{o.Name, o.Pos.Line}] = o
					}
					for _, r := range op.Regions {
						walk(r.Ops)
					}
				}
			}
			walk(m.Ops)
			for _, u := range frontendUses {
				if u.File != filepath.Base(path) {
					continue
				}
				o := uses[[2]any{u.Name, u.UseLine}]
				switch {
				case o == nil:
					t.Errorf("no use of %%%s on line %d", u.Name, u.UseLine)
				case o.Value == nil:
					t.Errorf("%%%s on line %d is unresolved", u.Name, u.UseLine)
				case o.Value.Pos.Line != u.DefLine:
					t.Errorf("%%%s on line %d resolves to line %d, want %d", u.Name, u.UseLine, o.Value.Pos.Line, u.DefLine)
				}
			}
		})
	}
}
