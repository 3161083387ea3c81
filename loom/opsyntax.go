package loom

// How the parser lays out each op it gives structure to. Every consumer
// (access inference, launch-config evaluation, interp, ptx, gen) relies on
// this table; change it only together with them.
//
// Notation: O = Op.Operands, T = Op.Types, RT = Op.ResultTypes,
// R = Op.Regions, "idx…" = one index operand per view axis (or per vector
// axis), in order. Result value types (Value.Type) are set by the parser:
// from RT when present, i1 for comparisons, else T[i] for result i (or T[0]
// when there is a single type).
//
// Top level
//   kernel.def / kernel.decl   see Kernel; R = [config (Args = workload), body (Label "launch", Args = launch)]
//   func.def / func.decl / template.def<@f> / func.template<k>
//                              see Func; R = [body (Args = params)]
//   config.decl @s : [%v:] T [where [p…]]   Symbol, T=[T], Preds
//   config.def @s = lit : T    Symbol, Literal, T=[T]
//   module.import "k" [@a, @b] Str = key, Words = symbol names
//   global.constant|variable @s : T [where [p…]] [= lit]
//                              Symbol, T=[T], Preds, Literal = initializer; see Global
//   test.split_func @f(%a: T…) { … } launch { … }
//                              Opaque; R = [config, launch], both with the signature's args
//   #alias = #attr<…>          not an op: Module.Aliases
//   other top-level ops        Opaque
//
// Result lists: `-> (T, %n: index, %x as T)` entries may be named or tied
// (Op.ResultSigs); func.def/decl keep theirs in Func.ResultSigs too.
//
// Globals
//   %v, %d…, %e = global.load @g : T   Symbol, T=[T]; %v:T, the others index
//                              (or encoding for T's layout name): T names them
//   global.store %v, @g : T    O=[v], Symbol, T=[T]
//
// Constants and config
//   index.constant N : T       Literal, T=[T]
//   scalar.constant lit : T    Literal, T=[T]  (lit may be int, float, true/false)
//   vector.constant lit : T    Literal, T=[T]
//   config.get @s : T          Symbol, T=[T]
//   target.subgroup.size : index
//
// Arithmetic (index.*, scalar.*, vector.* lane-wise)
//   binary  %r = op[<flags>] %a, %b : T            O=[a,b], Param=flags
//   ternary %r = op %a, %b, %c : T (madd, fmaf, fmai)
//   unary   %r = op %a : T
//   compare %r = op pred, %a, %b : T               Pred, O=[a,b] (vector: RT=[mask type])
//   cast    %r = op %x : A to B                    O=[x], T=[A], RT=[B]
//   index.scale %i, %s : index, offset -> offset   O=[i,s], T, RT
//   index.assume %v[, %w] [p…] : T[, T]            O, Preds, T
//   scalar.assume %v [p…] : T                      O, Preds, T
//   scalar.geluf<erf> %x {scale = 1.0} : f32       Param, Attrs
//
// Memory (the view operand is always followed by its indices)
//   buffer.view %b[%off] : buffer -> view<…>       O=[b,off], T=[buffer], RT=[view]
//   buffer.alloca<space> align(N) %bytes : buffer  Param=space, Attr align, O=[bytes]
//   buffer.length %b : buffer -> offset            O=[b]
//   buffer.assume.noalias %a, %b : …               O=[a,b]; results 1:1
//   buffer.assume.alignment %a {…} : buffer        O=[a]
//   buffer.assume.memory_space<s> %a : buffer      O=[a]
//   buffer.assume.same_root %a, %r : …             O=[a,r]; one result
//   view.subview %v[o…] : view<A> -> view<B>       O=[v,o…] (o may be literals)
//   view.refine %v : view<A> -> view<B>            O=[v]
//   view.load [<volatile>] %v[idx…] : view -> T    O=[v,idx…], Param "volatile" if written
//   view.store %x, %v[idx…] : T, view              O=[x,v,idx…]
//   view.atomic.rmw<k> %x, %v[idx…] {…} : T, view -> T    O=[x,v,idx…]
//   view.atomic.reduce<k> %x, %v[idx…] {…} : T, view      O=[x,v,idx…]
//   view.atomic.cmpxchg %e, %n, %v[idx…] {…} : T, view -> T  O=[e,n,v,idx…]
//   view.atomic.load %v[idx…] {…} : view -> T      O=[v,idx…]
//   view.atomic.store %x, %v[idx…] {…} : T, view   O=[x,v,idx…]
//   vector.load %v[idx…] : view -> vector          O=[v,idx…]
//   vector.store %w, %v[idx…] : vector, view       O=[w,v,idx…]
//   vector.load.mask %v[idx…], %m, %pass : …       O=[v,idx…,m,pass]
//   vector.store.mask %w, %v[idx…], %m : …         O=[w,v,idx…,m]
//   vector.gather %v[idx…][%offs] : …              O=[v,idx…,offs]
//   vector.scatter %w, %v[idx…][%offs] : …         O=[w,v,idx…,offs]
//   vector.fragment.load<role> %v[idx…] shape [%r, %c] : view -> vector
//                                                  Param=role, O=[v,idx…,r,c], W=[shape]
//   vector.fragment.store<role> %w, %v[idx…] shape [%r, %c] : vector, view
//                                                  Param=role, O=[w,v,idx…,r,c], W=[shape]
//
// Vectors
//   vector.splat %s : [S ->] V                     O=[s]
//   vector.broadcast %v : A -> B                   O=[v]
//   vector.from_elements %a, %b : … -> V           O
//   vector.iota %base step %step : V               O=[base,step], Words ["step"]
//   vector.mask.range [%lo to %hi step %s] : index -> V   O=[lo,hi,s]
//   vector.extract %v[idx…] : V -> T               O=[v,idx…]
//   vector.insert %x into %v[idx…] : T, V -> V     O=[x,v,idx…], Words ["into"]
//   vector.slice %v[o…] : A -> B                   O=[v,o…]
//   vector.select %m, %a, %b : V                   O=[m,a,b]
//   vector.reduce<k> %v, %init : V, T              O=[v,init]
//   vector.dotf %a, %b, %acc : V, V, T             O=[a,b,acc]
//   vector.mma %a, %b, %acc : A, B, C              O=[a,b,acc]; the result has type C
//   vector.fragment<role> %d shape [%r, %c] : V    Param=role, O=[d,r,c], W=[shape]
//   vector.dot4i<k> %a, %b, %acc : A, B, C          O=[a,b,acc], Param=k; result type C (also dot2f, dot4f8; dot8i4 : C)
//   vector.bitfield.extractu %x {offset = o, width = w} : A -> B   O=[x], Attrs, T=[A], RT=[B]
//   vector.bitfield.insert %f into %b {offset = o, width = w} : F, B   O=[f,b], result type B
//   vector.bitpack<w> %x : A -> B (also bitunpacku, bitunpacks)      O=[x], Param=w
//   vector.bitcast %x : A to B                     O=[x], T=[A], RT=[B]
//
// Control flow
//   scf.if %c [-> (T…)] { … } [else { … }]         O=[c], RT, R (second Label "else")
//   scf.for %iv = [%lb to %ub step %s] [(%a = %init : T, …)] [-> (T…)] [pipeline(…)] [unroll[(…)]] [schedule(…)] { … }
//                                                  O=[lb,ub,s,init…], R[0].Args=[iv,a…], RT
//   scf.while(%a = %init : T, …) -> (T…) { … scf.condition %k, %x… : i1, T… } do(%b: T, …) { … }
//                                                  O=[init…], R[0].Args=[a…], R[1] (Label "do").Args=[b…]
//   scf.condition %keep, %x… : i1, T…               O=[keep,x…]
//   scf.yield %x… : T…                              O
//   scf.select %c, %a, %b : T                       O=[c,a,b]
//   scf.switch %sel [-> (T…)] { case 0 { … } … default { … } }
//                                                  O=[sel], R = the case regions (Label "case", Case N) then "default"
//   scf.lookup %sel { 0 = (%x…), … } default(%d…) : T…   O=[sel], Cases
//
// Kernel body
//   kernel.workitem.id<x> : index (also workgroup.id/size/count, workitem.dispatch.id)   Param = axis
//   kernel.subgroup.id|lane.id|size|count : index
//   kernel.barrier<space> {ordering = …, scope = …} or scope(…) ordering(…)   Param, Attrs
//   kernel.return
//   kernel.exit %c : i1 [{ … }]                     O=[c], R optional
//   kernel.assert %ok ["msg"] : i1                  O=[ok], Str
//   kernel.launch.config workgroups(a,b,c) workgroup_size(d,e,f) [cluster_size(g,h,i)] [dynamic_workgroup_storage(s)] : index
//                                                  O = the values in the order written, Attrs = the clause
//                                                  keywords (SplitLaunchConfig assigns values to clauses)
//   kernel.workgroup.storage [align(N)] [%bytes] : buffer   O=[bytes], Attr align (StorageOperand)
//   kernel.subgroup.reduce<k> %v [{…}] : T          O=[v], Attrs
//   kernel.subgroup.scan<k> %v {mode = …, direction = …} : T
//   kernel.subgroup.shuffle<mode> %v, %off, %width : T, i32, i32   two results (value, i1 valid)
//   kernel.subgroup.broadcast %v from %lane : T, i32                O=[v,lane], Words ["from"]
//   kernel.subgroup.broadcast.first %v : T
//   kernel.subgroup.vote.any|all %p : i1; vote.ballot %p : i1 -> i64
//   kernel.workgroup.reduce<k> %v : T; kernel.workgroup.scan<k> …; kernel.workgroup.vote.*
//
// Calls
//   func.call [pure…] @f(%a, …) : (T…) [-> (R…)]    Symbol, Words = modifiers, O = args, T, RT
//   func.apply<key>(%a, …) [pure] : (T…) -> (R…)    Param = key, O, T, RT
//   template.apply<@fam>(%a, …) : (T…) -> (R…)      Param = "@fam", O, T, RT
//   template.call @impl(%a, …) : …                  Symbol, O
//   func.return [%v… : T…]; template.return …       O, T
//
// Any other op is parsed generically with Opaque set: Results are defined,
// Operands lists every SSA use outside its regions, nested regions are parsed
// as statements when they look like statements and skipped by balance
// otherwise (low.func.def … asm { … } is always skipped).
