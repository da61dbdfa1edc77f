"""The Lua scripts the transport runs on the server.

Redis runs one script at a time, start to end, with no other command in between: that is
what makes offsets dense and in order with any number of writers (TRANSPORT-74), and a
group's membership change one step that every member sees whole. Scripts read the
server's clock (``TIME``), so members on several machines share one clock.

Every script checks what it needs before it writes, so a script that fails (an unknown
partition, a stream another client wrote to) has written nothing. Redis does not roll a
script back, but it refuses only a script's first write when out of memory, and writes a
script to its append-only file as one ``MULTI``/``EXEC``, which a restart applies whole
or not at all.
"""

from __future__ import annotations

__all__ = ["APPEND", "FOREIGN_ENTRY", "GROUP_EXCHANGE", "GROUP_HEARTBEAT", "GROUP_JOIN",
           "GROUP_LEAVE", "GROUP_SYNC", "NO_PARTITION"]

NO_PARTITION = "OMCNOPARTITION"
"""The error :data:`APPEND` returns for a run whose topic or partition does not exist."""

FOREIGN_ENTRY = "OMCFOREIGN"
"""The error :data:`APPEND` returns for a stream holding an entry it did not write (an
``XADD`` by another client), whose ids would no longer be offsets."""

APPEND = """
-- KEYS[1]: the topics hash. ARGV: key prefix, max length (0: keep all), run count, then
-- per run (topic, partition, records), then per record: shape (1 key, 2 value,
-- 4 headers, added up), timestamp, then the key, value and headers it has.
-- Returns each run's first offset.
local topics, prefix = KEYS[1], ARGV[1]
local maxlen, nruns = tonumber(ARGV[2]), tonumber(ARGV[3])
local runs, at = {}, 4
for r = 1, nruns do
  local topic, partition, count = ARGV[at], tonumber(ARGV[at + 1]), tonumber(ARGV[at + 2])
  at = at + 3
  local partitions = tonumber(redis.call('HGET', topics, topic))
  if partitions == nil or partition >= partitions then
    return redis.error_reply('OMCNOPARTITION topic ' .. topic .. ' has no partition '
                             .. partition)
  end
  local stream = prefix .. 't:' .. topic .. ':' .. partition
  local top = redis.call('XREVRANGE', stream, '+', '-', 'COUNT', 1)[1]
  if top then
    local given = tonumber(redis.call('HGET', prefix .. 'next:' .. topic, partition) or '0')
    local number, sequence = string.match(top[1], '^(%d+)-(%d+)$')
    if sequence ~= '0' or tonumber(number) > given then
      return redis.error_reply('OMCFOREIGN stream ' .. stream .. ' holds entry ' .. top[1]
                               .. ' that the transport did not write')
    end
  end
  runs[r] = {topic, partition, count}
end
local firsts = {}
for r = 1, nruns do
  local topic, partition, count = runs[r][1], runs[r][2], runs[r][3]
  local stream = prefix .. 't:' .. topic .. ':' .. partition
  local offset = redis.call('HINCRBY', prefix .. 'next:' .. topic, partition, count)
      - count + 1
  firsts[r] = offset
  for _ = 1, count do
    local shape, id = ARGV[at], string.format('%d-0', offset)
    if shape == '3' then
      redis.call('XADD', stream, id, 'ts', ARGV[at + 1], 'key', ARGV[at + 2],
                 'value', ARGV[at + 3])
      at = at + 4
    elseif shape == '2' then
      redis.call('XADD', stream, id, 'ts', ARGV[at + 1], 'value', ARGV[at + 2])
      at = at + 3
    else
      local bits = tonumber(shape)
      local fields = {'ts', ARGV[at + 1]}
      at = at + 2
      if bits % 2 == 1 then
        fields[#fields + 1] = 'key'; fields[#fields + 1] = ARGV[at]; at = at + 1
      end
      if math.floor(bits / 2) % 2 == 1 then
        fields[#fields + 1] = 'value'; fields[#fields + 1] = ARGV[at]; at = at + 1
      end
      if bits >= 4 then
        fields[#fields + 1] = 'headers'; fields[#fields + 1] = ARGV[at]; at = at + 1
      end
      redis.call('XADD', stream, id, unpack(fields))
    end
    offset = offset + 1
  end
  if maxlen > 0 then
    redis.call('XTRIM', stream, 'MAXLEN', '~', maxlen)
  end
end
return firsts
"""
"""Stores runs of records, each run's offsets given out and its entries added in one
step (see the module docstring)."""

_NOW = """
local clock = redis.call('TIME')
local now = tonumber(clock[1]) * 1000 + math.floor(tonumber(clock[2]) / 1000)
"""

_REMOVE = """
local function remove(member)
  redis.call('HDEL', KEYS[1], member)
  redis.call('HDEL', KEYS[2], member)
  redis.call('HDEL', KEYS[3], member)
  local owners = redis.call('HGETALL', KEYS[4])
  for i = 1, #owners, 2 do
    if owners[i + 1] == member then redis.call('HDEL', KEYS[4], owners[i]) end
  end
end
"""

# Every group script takes KEYS = members, sessions, beats, owners (Keys.group) and, for
# sync, the topics hash as KEYS[5]; ARGV[1] is the member.

GROUP_JOIN = _NOW + """
redis.call('HSET', KEYS[1], ARGV[1], ARGV[2])
redis.call('HSET', KEYS[2], ARGV[1], ARGV[3])
redis.call('HSET', KEYS[3], ARGV[1], now)
return 1
"""
"""Registers a member (ARGV: member, topics as JSON, session timeout ms)."""

GROUP_SYNC = _NOW + _REMOVE + """
local beats = redis.call('HGETALL', KEYS[3])
for i = 1, #beats, 2 do
  local session = tonumber(redis.call('HGET', KEYS[2], beats[i]) or '0')
  if tonumber(beats[i + 1]) + session < now then remove(beats[i]) end
end
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 0 then return false end
redis.call('HSET', KEYS[3], ARGV[1], now)
local members = redis.call('HGETALL', KEYS[1])
local wanted, names = {}, {}
for i = 2, #members, 2 do
  for _, topic in ipairs(cjson.decode(members[i])) do
    if not wanted[topic] then wanted[topic] = true; names[#names + 1] = topic end
  end
end
local counts = {}
if #names > 0 then counts = redis.call('HMGET', KEYS[5], unpack(names)) end
local partitions = {}
for i = 1, #names do
  if counts[i] then
    partitions[#partitions + 1] = names[i]; partitions[#partitions + 1] = counts[i]
  end
end
return {members, partitions, redis.call('HGETALL', KEYS[4])}
"""
"""Heart-beats a member, evicts the members past their session timeout (freeing their
partitions) and returns {members, topic partition counts, owners}, or nil when the member
is not in the group."""

GROUP_EXCHANGE = """
-- ARGV: member, count of partitions to release, those, then those to claim.
local member, released = ARGV[1], tonumber(ARGV[2])
for i = 3, 2 + released do
  if redis.call('HGET', KEYS[4], ARGV[i]) == member then redis.call('HDEL', KEYS[4], ARGV[i]) end
end
if redis.call('HEXISTS', KEYS[1], member) == 0 then
  local owners = redis.call('HGETALL', KEYS[4])
  for i = 1, #owners, 2 do
    if owners[i + 1] == member then redis.call('HDEL', KEYS[4], owners[i]) end
  end
  return {}
end
local owned = {}
for i = 3 + released, #ARGV do
  redis.call('HSETNX', KEYS[4], ARGV[i], member)
  if redis.call('HGET', KEYS[4], ARGV[i]) == member then owned[#owned + 1] = ARGV[i] end
end
return owned
"""
"""Releases partitions and claims those nobody owns; returns the claimed ones the member
owns now (none when it was evicted meanwhile)."""

GROUP_LEAVE = _REMOVE + """
remove(ARGV[1])
return 1
"""
"""Removes a member and frees its partitions."""

GROUP_HEARTBEAT = _NOW + """
if redis.call('HEXISTS', KEYS[1], ARGV[1]) == 1 then
  redis.call('HSET', KEYS[3], ARGV[1], now)
end
return 1
"""
"""Stamps a member alive (between polls, from its heartbeat thread)."""
