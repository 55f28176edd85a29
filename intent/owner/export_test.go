package owner

import "sync/atomic"

// CountPasswordChecks makes s count the password checks it makes, so a test
// can tell how many guesses reached the hash.
func CountPasswordChecks(s *Service) *atomic.Int64 {
	var n atomic.Int64
	verify := s.verify
	s.verify = func(stored, password string) bool {
		n.Add(1)
		return verify(stored, password)
	}
	return &n
}

// FoldName is the form of a name the name check and the throttle compare.
var FoldName = foldName
