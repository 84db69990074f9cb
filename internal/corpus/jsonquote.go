package corpus

import "encoding/json"

// AppendJSONString appends s quoted as encoding/json quotes it: as it is when every byte
// is printable ASCII that encoding/json leaves alone, else through json.Marshal. The
// writers of corpus-derived JSON lines (the signatures command's JSONL, the dedup
// command's docs.jsonl) write their ids with it, field by field, without a Marshal call
// per line.
func AppendJSONString(dst []byte, s string) []byte {
	for i := 0; i < len(s); i++ {
		if c := s[i]; c < 0x20 || c >= 0x7F || c == '"' || c == '\\' || c == '<' || c == '>' || c == '&' {
			q, _ := json.Marshal(s) // a string always marshals
			return append(dst, q...)
		}
	}
	dst = append(dst, '"')
	dst = append(dst, s...)
	return append(dst, '"')
}
