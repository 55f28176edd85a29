package plan

import (
	"fmt"
	"strings"
	"unicode"
)

// MaxSlugWords is how many words of a title a slug keeps.
const MaxSlugWords = 6

// latin folds the accented lowercase letters a title most often holds, so
// "Café menü" gives cafe-menu rather than losing letters.
var latin = map[rune]string{
	'à': "a", 'á': "a", 'â': "a", 'ã': "a", 'ä': "a", 'å': "a", 'ā': "a", 'æ': "ae",
	'ç': "c", 'è': "e", 'é': "e", 'ê': "e", 'ë': "e", 'ē': "e",
	'ì': "i", 'í': "i", 'î': "i", 'ï': "i", 'ñ': "n",
	'ò': "o", 'ó': "o", 'ô': "o", 'õ': "o", 'ö': "o", 'ø': "o", 'œ': "oe",
	'ù': "u", 'ú': "u", 'û': "u", 'ü': "u", 'ý': "y", 'ÿ': "y", 'ß': "ss",
}

// Words is the words part of a slug made from a title: at most six
// lowercase words of ASCII letters and digits, joined by dashes. An
// apostrophe joins (don't → dont), other punctuation and spaces separate,
// and letters with no ASCII spelling are dropped. A title with no usable
// word gives "task".
func Words(title string) string {
	var (
		words []string
		word  strings.Builder
	)
	flush := func() {
		if word.Len() > 0 {
			words = append(words, word.String())
			word.Reset()
		}
	}
	for _, r := range strings.ToLower(title) {
		if len(words) == MaxSlugWords {
			break
		}
		switch {
		case r >= 'a' && r <= 'z', r >= '0' && r <= '9':
			word.WriteRune(r)
		case latin[r] != "":
			word.WriteString(latin[r])
		case r == '\'' || r == '’' || unicode.IsLetter(r) || unicode.IsMark(r):
			// dropped, without ending the word
		default:
			flush()
		}
	}
	flush()
	if len(words) > MaxSlugWords {
		words = words[:MaxSlugWords]
	}
	if len(words) == 0 {
		return "task"
	}
	return strings.Join(words, "-")
}

// Slug is the slug of task number n of its application: the number in at
// least four digits, then the title's words: 0007-add-tags-to-notes. The
// numbers come from the application's counter (task_numbers), start at
// 0001 and are never reused; past 9999 they have more digits (10000-…).
func Slug(n int, title string) string {
	return fmt.Sprintf("%04d-%s", n, Words(title))
}
