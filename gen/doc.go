package gen

import (
	"bytes"
	"fmt"
	"strings"

	"github.com/loomgen/loomgen/loom"
	"github.com/loomgen/loomgen/templates"
)

// DocData is what the Markdown reference template (templates/doc.md.tmpl)
// reads.
type DocData struct {
	Package string
	Sources []string
	Kernels []DocKernel
	Config  []DocConfig
	Fixed   []DocFixed
}

// DocFixed is one config.decl of encoding type, which has no Config field.
type DocFixed struct {
	Key, Type, Pos, Default string
}

// DocKernel describes one kernel in the reference.
type DocKernel struct {
	Export, GoName, Symbol, Pos, Doc string
	Signature                        string // the Go signature of Dispatch
	Params                           []DocParam
	Workgroups, WorkgroupSize        string
	// WorkgroupStorage is the dynamic_workgroup_storage byte count, ""
	// without the clause.
	WorkgroupStorage string
	Checks           []string
	Fingerprint      string
}

// DocParam is one Dispatch parameter in the reference.
type DocParam struct {
	Name, LoomType, GoType, Access, Extent string
}

// DocConfig is one Config field in the reference.
type DocConfig struct {
	Key, GoName, Type, GoType, Doc, Constraints, Default string
}

// Doc builds the reference data of the model.
func (m *Model) Doc() DocData {
	d := DocData{Package: m.Package}
	for _, s := range m.Sources {
		d.Sources = append(d.Sources, s.Name)
	}
	for _, c := range m.Fixed {
		d.Fixed = append(d.Fixed, DocFixed{Key: c.Key, Type: c.Type.String(), Pos: c.Pos.String(), Default: c.Default})
	}
	for _, c := range m.Config {
		dc := DocConfig{Key: c.Key, GoName: c.GoName, Type: c.Type.String(), GoType: c.GoType, Doc: strings.TrimSpace(c.Doc)}
		var preds []string
		for _, p := range c.Preds {
			preds = append(preds, predText(p))
		}
		dc.Constraints = strings.Join(preds, ", ")
		if c.Default != nil {
			dc.Default = c.Default.String()
		}
		d.Config = append(d.Config, dc)
	}
	for _, k := range m.Kernels {
		dk := DocKernel{Export: k.Export, GoName: k.GoName, Symbol: k.Symbol, Pos: k.Pos.String(),
			Doc: strings.TrimSpace(k.Doc), Fingerprint: k.Fingerprint}
		var sig []string
		for _, p := range k.Params {
			goType := goTypeText(p)
			sig = append(sig, p.GoName+" "+goType)
			dp := DocParam{Name: p.GoName, LoomType: p.Type.String(), GoType: goType}
			if b := p.Buffer; b != nil {
				dp.Access = b.Access.String()
				if b.Extent != nil {
					dp.Extent = prettyExpr(b.Extent, k, nil)
				} else {
					dp.Extent = "unknown"
				}
			}
			dk.Params = append(dk.Params, dp)
		}
		dk.Signature = fmt.Sprintf("func (k %s) Dispatch(%s) (loomrt.Dispatch, error)", k.GoName, strings.Join(sig, ", "))
		dk.Workgroups = triple(k.Geometry.Workgroups, k)
		dk.WorkgroupSize = triple(k.Geometry.WorkgroupSize, k)
		if e := k.Geometry.DynamicWorkgroupStorage; e != nil {
			dk.WorkgroupStorage = prettyExpr(e, k, nil)
		}
		for _, c := range k.Checks {
			dk.Checks = append(dk.Checks, c.Text)
		}
		d.Kernels = append(d.Kernels, dk)
	}
	return d
}

func triple(es [3]*loom.Expr, k *Kernel) string {
	parts := make([]string, 3)
	for i, e := range es {
		if e == nil {
			parts[i] = "1"
			continue
		}
		parts[i] = prettyExpr(e, k, nil)
	}
	return "(" + strings.Join(parts, ", ") + ")"
}

// goTypeText spells a parameter's Go type as the generated code does.
func goTypeText(p *Param) string {
	if b := p.Buffer; b != nil {
		if b.ElemGo != "" {
			return "loomrt.Slice[" + b.ElemGo + "]"
		}
		return "loomrt.Region"
	}
	t, _, _, _ := launchGoType(p.Type)
	return t
}

// RenderDoc writes the Markdown reference of the model.
func RenderDoc(m *Model) ([]byte, error) {
	var buf bytes.Buffer
	if err := templates.Doc(&buf, m.Doc()); err != nil {
		return nil, err
	}
	return buf.Bytes(), nil
}
