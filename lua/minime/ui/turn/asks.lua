--- The asks of a conversation as the rewind knows them: each prompt (a `> …` block) and the
--- checkpoint of its turn (its number among the thread's asks, review/baseline.lua), marked
--- when the host took that checkpoint (rpc.baseline), before the prompt went. A prompt whose
--- turn a resend left behind (above a "rewound" line) is stale: its checkpoint is gone.
local buffer = require("minime.ui.turn.buffer")

local api = vim.api

local M = {}

--- The conversation of thread `key`, if any.
---@param key string
---@return minime.turn.Turn?
local function of_key(key)
  for _, t in pairs(buffer.by_buf) do
    if t.key == key then
      return t
    end
  end
  return nil
end

--- The last prompt of thread `key`'s conversation is ask `n` (its checkpoint).
---@param key string
---@param n integer
function M.mark(key, n)
  local t = of_key(key)
  local past = t and t.past and t.past[#t.past]
  if past then
    past.ask = n
  end
end

--- Asks `n` and later of thread `key` are left behind (a resend of ask `n`).
---@param key string
---@param n integer
function M.stale_from(key, n)
  local t = of_key(key)
  for _, past in ipairs(t and t.past or {}) do
    if past.ask and past.ask >= n then
      past.ask, past.stale = nil, true
    end
  end
end

--- The ask whose prompt holds row `row` (1-based) of conversation buffer `buf`: {key, n, text}
--- or nil and why not.
---@param buf integer
---@param row integer
---@return {key: string, n: integer, text: string}?, string?
function M.at(buf, row)
  local t = buffer.by_buf[buf]
  if not t then
    return nil, "not a conversation"
  end
  local found
  for _, past in ipairs(t.past or {}) do
    local start = api.nvim_buf_get_extmark_by_id(buf, buffer.ns_pos, past.mark, {})[1]
    if start and start + 1 <= row then
      found = { past = past, start = start }
    end
  end
  local lines = found and api.nvim_buf_get_lines(buf, found.start, row, false) or {}
  local text = {}
  for _, line in ipairs(lines) do
    if not line:match("^>") then
      return nil, "not on an ask (its `> …` lines)"
    end
    text[#text + 1] = line:gsub("^> ?", "")
  end
  if #text == 0 then
    return nil, "not on an ask (its `> …` lines)"
  end
  for _, line in ipairs(api.nvim_buf_get_lines(buf, row, -1, false)) do
    if not line:match("^>") then
      break
    end
    text[#text + 1] = line:gsub("^> ?", "")
  end
  local past = found.past
  if past.stale then
    return nil, "this ask was left behind by a rewind: its checkpoint is gone"
  elseif not past.ask then
    return nil, "this ask has no checkpoint (it never reached the agent)"
  end
  return { key = t.key, n = past.ask, text = table.concat(text, "\n") }
end

return M
