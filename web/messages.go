package web

import (
	"fmt"
	"strings"
)

// The console's texts, as docs/web.md gives them. Paths in them are memory
// paths (/memories/...), never store keys.
const (
	msgBadToken    = "That token is not valid. Paste the whole token you were given."
	msgLogin       = "You are not logged in, or your login has ended. Log in again and repeat what you did."
	msgCSRF        = "This form is out of date or did not come from this console, so nothing was changed. Go back, reload the page and try again."
	msgUnavailable = "The memory store is not available right now. Try again later; the server's log has the details."
	msgStorage     = "The memory storage failed, so this page could not be shown. Try again; the server's log has the details."
	msgReadOnly    = "You can read this store but not change it, so nothing was changed."
	msgNotFound    = "There is no such page."
	msgNoImage     = "This file is not an image."
)

func msgTokenRefused(reason string) string {
	return fmt.Sprintf("That token was refused: %s. Paste a current access token for this memory store.", reason)
}

func msgLoginEnded(reason string) string {
	return fmt.Sprintf("Your login has ended: %s. Log in again with a new token.", reason)
}

func msgNoFile(path string) string {
	return fmt.Sprintf("There is no file %s.", path)
}

func msgUnknownVersion(path, id string) string {
	return fmt.Sprintf("%s has no version %s.", path, id)
}

func msgNoContent(id string) string {
	return fmt.Sprintf("Version %s has no content: it is a deletion, or its content was redacted.", id)
}

func msgCurrentContent(id string) string {
	return fmt.Sprintf("Version %s holds the content the file has now, so it cannot be redacted. Change or delete the file first.", id)
}

func msgChanged(path string) string {
	return fmt.Sprintf("%s changed while you were looking at it, so nothing was changed. Look at its history again and repeat what you did.", path)
}

func msgNoHistory(path string) string {
	return fmt.Sprintf("%s has no recorded versions and no file.", path)
}

func msgHistoryNotKept(path string) string {
	return fmt.Sprintf("No history is kept where %s is stored, so it has no versions to show, restore or redact.", path)
}

func msgNoHistoryKept(paths []string) string {
	return fmt.Sprintf("No history is kept in %s, so changes there are not in this log.", strings.Join(paths, ", "))
}

func msgBadTime(field, value string) string {
	return fmt.Sprintf("%q is not a time for %q: give a date such as 2026-12-01, or a date and time such as 2026-12-01T09:30.", value, field)
}

func msgBinary(size string) string {
	return fmt.Sprintf("This file is %s of binary content, which is not shown.", size)
}

// The confirmations.

func msgConfirmRestore(path, id, size, when, actor, who string) string {
	return fmt.Sprintf("This writes the content of version %s (%s, written %s by %s) back to %s, as a new version "+
		"recorded with you, %s, as its author. Nothing is deleted: the content the file holds now stays in its history. "+
		"If the file changes before you confirm, nothing is written.", id, size, when, orUnknown(actor), path, who)
}

func msgConfirmRedact(path string, ids []string, who string) string {
	return fmt.Sprintf("This erases, for good, the content of %s of %s: %s. Every version of the file with the same content "+
		"is erased with it. The records stay, with their time, author and operation, marked as redacted by you, %s; their "+
		"size and SHA-256 are erased too. This cannot be undone.", plural(len(ids), "version"), path, strings.Join(ids, ", "), who)
}

// The outcomes.

func msgRestored(path, id, newID string) string {
	return fmt.Sprintf("Restored %s to version %s: its new version is %s.", path, id, newID)
}

func msgRedacted(path string, ids []string) string {
	return fmt.Sprintf("Redacted %s of %s: %s.", plural(len(ids), "version"), path, strings.Join(ids, ", "))
}

func msgTruncatedAudit(shown, total int) string {
	return fmt.Sprintf("Showing the latest %d of %d events. Narrow the filter to see the others.", shown, total)
}

func orUnknown(actor string) string {
	if actor == "" {
		return "an unknown author"
	}
	return actor
}

func plural(n int, noun string) string {
	if n == 1 {
		return "1 " + noun
	}
	return fmt.Sprintf("%d %ss", n, noun)
}
