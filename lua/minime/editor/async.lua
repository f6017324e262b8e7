--- Tools that wait without holding the editor: each call runs in a coroutine, and
--- `async.wait(start)` suspends it until `start(done)` calls `done(...)` — from a libuv callback
--- (a file read), an LSP answer, a timer. The tool's code stays straight-line; Neovim's main
--- loop runs between the steps. A call that never waits ends at once, as a plain function call.
---
---   local data = async.wait(function(done) vim.uv.fs_read(fd, n, pos, done) end)
local M = {}

local ours = setmetatable({}, { __mode = "k" }) -- coroutines run by M.run

--- Whether the running code may call M.wait (it runs inside M.run).
function M.can_wait()
  local co = coroutine.running()
  return co ~= nil and ours[co] == true
end

--- Suspend the running tool until `start(done)` calls `done(...)`; returns done's arguments.
--- `done` may be called from a fast (libuv) context: the tool resumes on the main loop.
---@param start fun(done: fun(...))
function M.wait(start)
  if not M.can_wait() then
    error("minime.editor.async.wait called outside a tool call", 2)
  end
  return coroutine.yield(start)
end

--- Suspend the running tool until the main loop has run once (long work gives way).
function M.yield()
  return M.wait(function(done)
    done()
  end)
end

--- Run `fn()` in a coroutine; `on_end(true, value)` or `on_end(false, err, traceback)` once it
--- ends, synchronously when it never waits.
---@param fn fun(): any
---@param on_end fun(ok: boolean, value: any, traceback?: string)
function M.run(fn, on_end)
  local co = coroutine.create(fn)
  ours[co] = true
  local step
  step = function(...)
    local ok, result = coroutine.resume(co, ...)
    if not ok then
      local traceback = type(result) ~= "table" and debug.traceback(co, tostring(result)) or nil
      return on_end(false, result, traceback)
    end
    if coroutine.status(co) == "dead" then
      return on_end(true, result)
    end
    if type(result) ~= "function" then
      return on_end(false, "a tool yielded something other than async.wait", nil)
    end
    local resumed = false
    local started, err = pcall(result, function(...)
      if resumed then
        return -- a second answer to one wait (a late callback): ignored
      end
      resumed = true
      local values = { n = select("#", ...), ... }
      vim.schedule(function()
        step(unpack(values, 1, values.n))
      end)
    end)
    if not started and not resumed then
      resumed = true
      return on_end(false, err, debug.traceback(tostring(err)))
    end
  end
  step()
end

--- Run `fn()` for one call from the host: its answer at once when it never waits, else
--- `{ ok = true, pending = true }` now and the answer later through `reply` (a function, or the
--- host's call id for a "tool_result" notification). `settle(ok, value, traceback)` makes the
--- answer table of how `fn` ended.
---@param fn fun(): any
---@param settle fun(ok: boolean, value: any, traceback?: string): table
---@param reply function|integer|nil
---@return table
function M.answer(fn, settle, reply)
  local answer, waiting = nil, false
  M.run(fn, function(ok, value, traceback)
    answer = settle(ok, value, traceback)
    if not waiting then
      return
    elseif type(reply) == "function" then
      reply(answer)
    elseif type(reply) == "number" then
      require("minime.host").notify("tool_result", { id = reply, answer = answer })
    end
  end)
  if answer then
    return answer
  end
  waiting = true
  return { ok = true, pending = true }
end

return M
