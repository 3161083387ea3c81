// Command gen is the example model repository for loomgen. It is filled in by
// the example issue; for now it only proves the workspace builds.
package main

import "fmt"

func main() { fmt.Println("loomgen example: not written yet") }
