// Package runtime is the session a model uses to run Loom kernels: it owns the
// model's storage (checked byte regions), its compiled kernels and its
// reusable command graphs, infers every dependency between recorded commands
// from the access each binding declares, and measures graph replay against
// direct dispatch.
//
// Generated bindings import it as loomrt:
//
//	s, err := loomrt.Open(loomrt.Options{Backend: "auto"})
//	k, err := model.Load(s, cfg)            // generated: one Compile batch
//	x, err := loomrt.Alloc[float32](s, 1024)
//	d, err := k.Scale.Dispatch(1024, 2, x, y) // generated: checked, typed
//	err = s.Record("step", []loomrt.Command{d})
//	err = s.Replay("step")
//	out, err := loomrt.ReadSlice(s, y)
//
// Dependencies are inferred at byte granularity: a command that reads bytes
// follows the last command that wrote them; a command that writes bytes
// follows the last writer and every reader since. On the CPU backend a
// recording is a schedule whose independent commands run concurrently; on a
// GPU it becomes a native graph.
//
// The backend is chosen by Options.Backend ("auto", "cpu", "cuda", "hip"),
// overridden by the LOOM_BACKEND environment variable. Every error a caller
// may want to branch on wraps one of the Err* sentinels.
package runtime

// BindingAPIv2 is the version guard generated code references
// (`const _ = loomrt.BindingAPIv2`). A runtime whose binding contract changes
// incompatibly renames it, so stale bindings stop compiling. Version 2:
// dispatches are sealed and made by Session.NewDispatch.
const BindingAPIv2 = 2
