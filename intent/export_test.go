package intent

// SetAfterApply runs f between applying interventions and acknowledging
// them: the crash window the tests kill a process in.
func SetAfterApply(s *Interventions, f func()) { s.afterApply = f }
