---@mod minime.ui.terminal The agent's commands run in the client terminal, as the user sees them.
---
--- The host runs them (rplugin/python3/minime/terminals.py) and sends their output: with the
--- turn's events (`terminal`, each the output's end now; tools.lua draws it under its tool
--- line) and for :MiniMeTerminal (`require('minime.rpc').show_terminal`). This module keeps,
--- per thread (its conversation's key), the ids seen (for completion) and the last one, and
--- shows a terminal's output in a scratch buffer — one per terminal, refreshed while open.
local printable = require("minime.ui.printable")

local api = vim.api

local M = {}

---@type table<string, {ids: string[], last: string?}>
local seen = {}
---@type table<string, integer> "thread\0id" -> its buffer
local buffers = {}

local function remember(key, id)
  local s = seen[key] or { ids = {} }
  seen[key] = s
  if not vim.tbl_contains(s.ids, id) then
    table.insert(s.ids, id)
  end
  s.last = id
end

--- The output as buffer lines: escape sequences (colours) dropped, other controls shown.
local function lines_of(output, status)
  local text = tostring(output or ""):gsub("\27%[[%d;?]*[%a@]", ""):gsub("\r\n", "\n")
  local lines = vim.split(text, "\n", { plain = true })
  if lines[#lines] == "" then
    lines[#lines] = nil
  end
  for i, line in ipairs(lines) do
    lines[i] = printable.line(line, math.huge)
  end
  if type(status) == "string" then
    lines[#lines + 1] = "[" .. printable.line(status) .. "]"
  end
  return lines
end

local function fill(buf, output, status)
  vim.bo[buf].modifiable = true
  api.nvim_buf_set_lines(buf, 0, -1, false, lines_of(output, status))
  vim.bo[buf].modifiable = false
end

--- A `terminal` event of the conversation `key` (its thread): its id is remembered, its open
--- buffer refreshed.
---@param key string
---@param ev {terminal_id: string, output: string, status: string?}
function M.update(key, ev)
  if type(ev.terminal_id) ~= "string" then
    return
  end
  remember(key, ev.terminal_id)
  local buf = buffers[key .. "\0" .. ev.terminal_id]
  if buf and api.nvim_buf_is_valid(buf) then
    fill(buf, ev.output, ev.status ~= vim.NIL and ev.status or nil)
  end
end

--- Open (or refresh and go to) the buffer of one terminal of thread `key`, in a split at the
--- bottom.
---@param key string
---@param shown {terminal_id: string, output: string, status: string?, ids: string[]}
function M.show(key, shown)
  for _, id in ipairs(type(shown.ids) == "table" and shown.ids or {}) do
    remember(key, id)
  end
  remember(key, shown.terminal_id)
  local slot = key .. "\0" .. shown.terminal_id
  local buf = buffers[slot]
  if not (buf and api.nvim_buf_is_valid(buf)) then
    buf = api.nvim_create_buf(false, true)
    vim.bo[buf].bufhidden = "hide"
    vim.b[buf].minime = "terminal"
    local name = ("minime://terminal/%s/%s"):format(
      vim.fn.fnamemodify(require("minime.threads").cwd_of(key) or key, ":t"),
      shown.terminal_id
    )
    pcall(api.nvim_buf_set_name, buf, name)
    buffers[slot] = buf
  end
  fill(buf, shown.output, shown.status ~= vim.NIL and shown.status or nil)
  require("minime.ui.bottom").show_at_bottom(buf, "the terminal's window", ":MiniMeTerminal")
end

--- The terminal ids of thread `key` (a cwd: its current thread) seen so far that start with
--- `lead` (:MiniMeTerminal completion).
---@param key string
---@param lead string
---@return string[]
function M.complete(key, lead)
  return vim.tbl_filter(function(id)
    return id:sub(1, #lead) == lead
  end, (require("minime.threads").pick(seen, key) or { ids = {} }).ids)
end

return M
