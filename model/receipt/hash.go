package receipt

// ShortHash abbreviates a hex hash (a SHA-256 or a commit) to its first 12 digits for
// display; a shorter string is returned unchanged. Full hashes stay in the files that
// record them.
func ShortHash(sum string) string {
	if len(sum) > 12 {
		return sum[:12]
	}
	return sum
}
