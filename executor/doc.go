// Package executor will run a backlog one verified task at a time: each task
// in a turn of its own, judged by the build and the acceptance examples the
// host ran, never by what the model says. It lands with the executor issue.
package executor
