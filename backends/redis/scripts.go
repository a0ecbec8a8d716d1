package redis

import goredis "github.com/redis/go-redis/v9"

// The Lua scripts below are the only code that writes a store's keys. Each
// runs atomically on the server, makes every check before its first write
// (so that a failed check changes nothing), and touches only keys of one
// store, which share one cluster hash tag (see keys). The one write a
// script may make before or without passing its checks is removing a
// stale index entry, one whose object is gone (an evicted key, or one
// another program deleted): no call of the store can tell the difference,
// and since the script checks that the object is missing in the same
// atomic run, it never removes the entry of an object another writer has
// just created. The object keys of
// rename, deleteTree and list are built inside the script from the object
// name prefix passed in ARGV, which is legal because they hash to the same
// slot as the declared keys.
//
// Every write script takes a write mark key (cm:{P}:w:ID, a fresh random ID
// per call). When the script succeeds it stores its outcome there for
// markTTL; when it finds the mark already set, it returns that outcome
// without running again. go-redis retries a command whose connection broke
// after it was sent, so without the mark a create that landed could come
// back as "already exists" on the retry.
//
// The modification time is the server's clock (TIME), in microseconds since
// the Unix epoch.

// getScript reads an object unless its data is over the caller's limit,
// which HSTRLEN measures without reading it.
//
//	KEYS: object
//	ARGV: limit in bytes
//	returns {size} when the data is over the limit, else HMGET d v s m (nils for a missing object)
var getScript = goredis.NewScript(`
local n = redis.call('HSTRLEN', KEYS[1], 'd')
if n > tonumber(ARGV[1]) then return {n} end
return redis.call('HMGET', KEYS[1], 'd', 'v', 's', 'm')
`)

// putScript stores an object if its condition holds and, when the caller
// holds the object's lock, only while the lock still holds the caller's
// token (see Lock). A new object must not make a name both an object and
// a directory (blob.Traits.ExclusiveNames): none of its ancestors may be
// an object, and no key may lie under it. An existing object passed that
// check when it was made, and every later write keeps it so, so a
// replacement skips it.
//
//	KEYS: idx, seq, mark, object[, lock]
//	ARGV: blob key, data, mode ("" unconditional, "a" if absent, "v" if version), version, mark TTL in ms[, lock token]
//	returns {1, "VERSION MTIME"} on success, {0} when a condition failed
//	or the name clashes, {-1} when the lock no longer holds the token (the
//	lease was lost)
var putScript = goredis.NewScript(`
local done = redis.call('GET', KEYS[3])
if done then return {1, done} end
if KEYS[5] and redis.call('GET', KEYS[5]) ~= ARGV[6] then return {-1} end
local cur = redis.call('HGET', KEYS[4], 'v')
if ARGV[3] == 'a' and cur then return {0} end
if ARGV[3] == 'v' and cur ~= ARGV[4] then return {0} end
if not cur then
  local obj = string.sub(KEYS[4], 1, #KEYS[4] - #ARGV[1])
` + clashCheck("KEYS[1]", "obj", "ARGV[1]", "{0}") + `
end
local v = redis.call('INCR', KEYS[2])
local t = redis.call('TIME')
local m = string.format('%s%06d', t[1], t[2])
redis.call('HSET', KEYS[4], 'd', ARGV[2], 'v', v, 's', string.len(ARGV[2]), 'm', m)
redis.call('ZADD', KEYS[1], 0, ARGV[1])
local out = v .. ' ' .. m
redis.call('SET', KEYS[3], out, 'PX', ARGV[5])
return {1, out}
`)

// deleteScript removes an object if its condition holds. When the object
// is missing, it removes the object's index entry, if stale.
//
//	KEYS: idx, mark, object
//	ARGV: blob key, mode ("" unconditional, "a" if absent, "v" if version), version, mark TTL in ms
//	returns 1 when deleted, 0 when the object is missing, -1 when the condition failed
var deleteScript = goredis.NewScript(`
if redis.call('EXISTS', KEYS[2]) == 1 then return 1 end
local cur = redis.call('HGET', KEYS[3], 'v')
if not cur then
  redis.call('ZREM', KEYS[1], ARGV[1])
  return 0
end
if ARGV[2] == 'a' then return -1 end
if ARGV[2] == 'v' and cur ~= ARGV[3] then return -1 end
redis.call('DEL', KEYS[3])
redis.call('ZREM', KEYS[1], ARGV[1])
redis.call('SET', KEYS[2], '1', 'PX', ARGV[4])
return 1
`)

// renameScript moves the object src, or else every object under src/, to
// the same place under dst, giving each a new version and mtime. Like a
// new object, dst must not clash with a name (putScript). Only objects
// that exist are moved and counted: the stale index entries it meets at
// src and under src/ are removed, so that an evicted src is "nothing at
// src" (or the directory src/, if objects lie under it).
//
//	KEYS: idx, seq, mark
//	ARGV: object name prefix, src, dst, mark TTL in ms
//	returns the number of objects moved, 0 when there is nothing at src,
//	-1 when dst exists as an object or as a directory, or an ancestor of
//	dst is an object
var renameScript = goredis.NewScript(`
local done = redis.call('GET', KEYS[3])
if done then return tonumber(done) end
local obj, src, dst = ARGV[1], ARGV[2], ARGV[3]
local moves = {}
if redis.call('ZSCORE', KEYS[1], src) then
  if redis.call('EXISTS', obj .. src) == 1 then
    moves = {src}
  else
    redis.call('ZREM', KEYS[1], src)
  end
end
if #moves == 0 then
  for _, k in ipairs(redis.call('ZRANGEBYLEX', KEYS[1], '[' .. src .. '/', '(' .. src .. '/\255')) do
    if redis.call('EXISTS', obj .. k) == 1 then
      moves[#moves + 1] = k
    else
      redis.call('ZREM', KEYS[1], k)
    end
  end
  if #moves == 0 then return 0 end
end
if redis.call('EXISTS', obj .. dst) == 1 then return -1 end
` + clashCheck("KEYS[1]", "obj", "dst", "-1") + `
local t = redis.call('TIME')
local m = string.format('%s%06d', t[1], t[2])
for _, from in ipairs(moves) do
  local to = dst .. string.sub(from, string.len(src) + 1)
  redis.call('ZREM', KEYS[1], from)
  redis.call('RENAME', obj .. from, obj .. to)
  redis.call('HSET', obj .. to, 'v', redis.call('INCR', KEYS[2]), 'm', m)
  redis.call('ZADD', KEYS[1], 0, to)
end
redis.call('SET', KEYS[3], #moves, 'PX', ARGV[4])
return #moves
`)

// deleteTreeScript deletes every object under dir/ and removes their index
// entries, the stale ones included; only objects that existed are counted.
//
//	KEYS: idx, mark
//	ARGV: object name prefix, dir, mark TTL in ms
//	returns the number of objects deleted (0: there were none)
var deleteTreeScript = goredis.NewScript(`
local done = redis.call('GET', KEYS[2])
if done then return tonumber(done) end
local lo, hi = '[' .. ARGV[2] .. '/', '(' .. ARGV[2] .. '/\255'
local members = redis.call('ZRANGEBYLEX', KEYS[1], lo, hi)
if #members == 0 then return 0 end
local deleted = 0
for _, k in ipairs(members) do
  deleted = deleted + redis.call('DEL', ARGV[1] .. k)
end
redis.call('ZREMRANGEBYLEX', KEYS[1], lo, hi)
if deleted == 0 then return 0 end
redis.call('SET', KEYS[2], deleted, 'PX', ARGV[3])
return deleted
`)

// listScript reads one page of the index and the metadata of each object on
// it, atomically, so that a page is a consistent snapshot. It leaves out,
// and removes, the stale entries it meets. The removal is a pcall, so that
// a user whose ACL refuses writes still lists, leaving the entries in
// place.
//
//	KEYS: idx
//	ARGV: object name prefix, ZRANGEBYLEX min, max, page size
//	returns {n, last, key1, version1, size1, mtime1, key2, ...}: n is the
//	number of index members read and last the greatest of them ("" when n
//	is 0), from which the next page starts
var listScript = goredis.NewScript(`
local members = redis.call('ZRANGEBYLEX', KEYS[1], ARGV[2], ARGV[3], 'LIMIT', 0, ARGV[4])
local out = {#members, members[#members] or ''}
for _, k in ipairs(members) do
  local h = redis.call('HMGET', ARGV[1] .. k, 'v', 's', 'm')
  if h[1] then
    out[#out + 1] = k
    out[#out + 1] = h[1]
    out[#out + 1] = h[2]
    out[#out + 1] = h[3]
  else
    redis.pcall('ZREM', KEYS[1], k)
  end
end
return out
`)

// clashCheck is the Lua that returns refused when the key named by the
// expression key would make a name both an object and a directory in the
// index idx, whose objects' keys start with the expression obj: an
// ancestor of it is an object, or an object lies under it. An index entry
// whose object is gone is no object, as for Stat and List: an ancestor's is
// skipped (the check reads no ancestor's entry), and one under key is
// removed, so that the next check does not meet it. Index members are valid
// UTF-8 (blob.CheckKey), which never holds the byte 0xff, so
// '(' .. key .. '/\255' bounds every key under key/.
func clashCheck(idx, obj, key, refused string) string {
	return `local i = string.find(` + key + `, '/', 1, true)
while i do
  if redis.call('EXISTS', ` + obj + ` .. string.sub(` + key + `, 1, i - 1)) == 1 then return ` + refused + ` end
  i = string.find(` + key + `, '/', i + 1, true)
end
local lo = '[' .. ` + key + ` .. '/'
while true do
  local under = redis.call('ZRANGEBYLEX', ` + idx + `, lo, '(' .. ` + key + ` .. '/\255', 'LIMIT', 0, 1)
  if #under == 0 then break end
  if redis.call('EXISTS', ` + obj + ` .. under[1]) == 1 then return ` + refused + ` end
  redis.call('ZREM', ` + idx + `, under[1])
  lo = '(' .. under[1]
end`
}

// scripts is every script, for loading them once at Open.
var scripts = []*goredis.Script{putScript, deleteScript, renameScript, deleteTreeScript, listScript, renewScript, unlockScript}
