--- Give malloc's free pages back to the system once the editor idles after a turn.
---
--- A conversation kept open all day churns Neovim's C heap: the float's lines appended and
--- dropped at its cap, the tool output trimmed, markdown's parse trees freed by the collector.
--- What is freed stays inside glibc's heap as free chunks between live ones (fragmentation),
--- which VmRSS keeps: over 1,000 tool turns malloc's bytes in use grew 0.26 MiB (the float going
--- from 15,000 lines to its cap) while its free space grew from 0.73 to 1.16 MiB, and only
--- `malloc_trim(0)` returns those pages (bench/conversation_memory.py). Moving the float to a
--- fresh buffer does not: the old buffer's blocks become more free space in the same heap.
---
--- After a turn ends, `malloc_trim(0)` runs once the editor has seen no other turn end for
--- IDLE_MS, and at most MAX_MS after the first end it waits for (back-to-back turns). It
--- costs 0.36 ms after 300 tool turns, 0.03 ms when there is nothing to give back. Only where
--- it exists: LuaJIT's FFI and glibc (Linux); on musl, macOS, Windows or a PUC Lua build the
--- lookup fails once and nothing is done, silently.
local M = {}

M.IDLE_MS = 2000
M.MAX_MS = 60000
--- Trims done (read by tests and bench/conversation_memory.py).
M.trims = 0

---@type (fun(pad: integer): integer)|false|nil nil: not looked up yet; false: not there
local trim_fn
local timer ---@type uv.uv_timer_t?
local due_at ---@type integer? when the first end not yet trimmed after came (ms)

local function lookup()
  if trim_fn == nil then
    trim_fn = false
    local ok, fn = pcall(function()
      if jit == nil or jit.os ~= "Linux" then
        return nil
      end
      local ffi = require("ffi")
      -- Another plugin may have declared it already (the same declaration: no error).
      pcall(ffi.cdef, "int malloc_trim(size_t pad);")
      local sym = ffi.C.malloc_trim -- throws where the symbol is missing (musl)
      return function(pad)
        return sym(pad)
      end
    end)
    trim_fn = ok and fn or false
  end
  return trim_fn
end

--- Trim now, where malloc_trim exists. Never throws.
---@return boolean trimmed
function M.trim()
  due_at = nil
  local fn = lookup()
  if not fn then
    return false
  end
  local ok = pcall(fn, 0)
  if ok then
    M.trims = M.trims + 1
  end
  return ok
end

--- A turn ended: trim once the editor idles (see above).
function M.soon()
  if lookup() == false then
    return
  end
  local now = vim.uv.now()
  due_at = due_at or now
  local delay = math.max(0, math.min(M.IDLE_MS, due_at + M.MAX_MS - now))
  if not timer then
    timer = vim.uv.new_timer()
    if not timer then
      return
    end
  end
  timer:start(delay, 0, function()
    M.trim() -- a libuv callback: only the FFI call and counters, no editor API
  end)
end

return M
