package web

import (
	"strings"

	"github.com/cloudmem/cloudmem/mcpserver"
)

// The keys of a tenant's tree (its memory paths without /memories/) are
// not the keys of the store the history records: a tenant sees the keys
// under its prefix, and with mounts each mount's keys under the mount's
// prefix. These two functions translate, as mcpserver.TenantHandler builds
// the tenant's view.

// storeKey returns the store key of key, a key of t's tree, and whether
// that part of the tree is read-only (a read-only mount); ok is false when
// key lies in no mount of t.
func storeKey(t *mcpserver.Tenant, key string) (skey string, readOnly, ok bool) {
	if t == nil {
		return key, false, true
	}
	if len(t.Mounts) > 0 {
		name, rest, _ := strings.Cut(key, "/")
		found := false
		for _, m := range t.Mounts {
			if m.Name == name && rest != "" {
				key, readOnly, found = join(m.Prefix, rest), m.ReadOnly, true
				break
			}
		}
		if !found {
			return "", false, false
		}
	}
	return join(t.Prefix, key), readOnly, true
}

// tenantKey is the inverse of storeKey: the key of t's tree that shows the
// store key skey, and ok false when t does not see skey.
func tenantKey(t *mcpserver.Tenant, skey string) (string, bool) {
	if t == nil {
		return skey, true
	}
	key, ok := under(t.Prefix, skey)
	if !ok || len(t.Mounts) == 0 {
		return key, ok
	}
	for _, m := range t.Mounts {
		if rest, ok := under(m.Prefix, key); ok {
			return m.Name + "/" + rest, true
		}
	}
	return "", false
}

func join(prefix, key string) string {
	if prefix == "" {
		return key
	}
	return strings.TrimSuffix(prefix, "/") + "/" + key
}

// under returns key without the directory prefix, and whether key lies
// beneath it ("" holds every key).
func under(prefix, key string) (string, bool) {
	if prefix == "" {
		return key, true
	}
	rest, ok := strings.CutPrefix(key, strings.TrimSuffix(prefix, "/")+"/")
	return rest, ok && rest != ""
}

// seesPart reports whether tenant t (nil: the whole store) sees any of part
// p, and at which key of t's tree the part (or the piece of it t sees)
// shows: "" for the whole tree.
func seesPart(t *mcpserver.Tenant, p *part) (at string, ok bool) {
	switch {
	case p.name == "":
		return "", true
	case t == nil:
		return p.name, true
	}
	type view struct{ at, prefix string } // where t shows the keys under prefix
	views := []view{{"", t.Prefix}}
	if len(t.Mounts) > 0 {
		views = views[:0]
		for _, m := range t.Mounts {
			views = append(views, view{m.Name, join(t.Prefix, m.Prefix)})
		}
	}
	for _, v := range views {
		prefix := strings.Trim(v.prefix, "/")
		switch {
		case prefix == "":
			return strings.TrimPrefix(join(v.at, p.name), "/"), true
		case prefix == p.name || strings.HasPrefix(prefix, p.name+"/"):
			return v.at, true
		}
	}
	return "", false
}
