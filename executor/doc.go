// Package executor runs a backlog one verified task at a time: each task in
// a turn of its own, judged by the build and the acceptance examples the
// host ran, never by what the model says. Every turn it runs leaves one
// usage row.
package executor
