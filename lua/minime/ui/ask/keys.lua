--- The keys of an asking float (minime.ui.ask): each does nothing until the float is live
--- (its key delay over, permission_focus.lua) nor while a step of the kind's own is open
--- (`p.filling`, e.g. a vim.ui.select of a question's field). Buffer-local, normal mode.
local focus = require("minime.ui.permission_focus")
local oneline = require("minime.ui.window").oneline

local api = vim.api

local M = {}

--- Map `lhs` in the float of `p` to `fn`.
---@param p minime.ask.Ask
---@param lhs string
---@param fn fun()
---@param desc string
function M.map(p, lhs, fn, desc)
  vim.keymap.set("n", lhs, function()
    if focus.live(p) and not p.filling then
      fn()
    end
  end, { buffer = p.buf, nowait = true, desc = "minime: " .. desc })
end

--- Unmap `lhs` (a key no longer offered after a redraw).
---@param p minime.ask.Ask
---@param lhs string
function M.unmap(p, lhs)
  pcall(vim.keymap.del, "n", lhs, { buffer = p.buf })
end

---@class minime.ask.Picks
---@field first integer the row before the first item's line
---@field items table[] one per line from row first + 1, in order
---@field label fun(item: table): string
---@field pick fun(item: table)
---@field noun string what an item is, for <CR>'s description ("option", "choice")
---@field beyond? fun(row: integer) <CR> on a row that holds no item

--- Keys 1..9 pick the item of that number, <CR> the one under the cursor.
---@param p minime.ask.Ask
---@param o minime.ask.Picks
function M.picks(p, o)
  for i = 1, math.min(#o.items, 9) do
    M.map(p, tostring(i), function()
      o.pick(o.items[i])
    end, "answer " .. oneline(o.label(o.items[i])))
  end
  M.map(p, "<CR>", function()
    local row = api.nvim_win_get_cursor(0)[1]
    local item = o.items[row - o.first]
    if item then
      o.pick(item)
    elseif o.beyond then
      o.beyond(row)
    end
  end, "answer the " .. o.noun .. " under the cursor")
end

--- q and <Esc> say no (`desc`: "reject", "decline").
---@param p minime.ask.Ask
---@param fn fun()
---@param desc string
function M.refuse(p, fn, desc)
  for _, lhs in ipairs({ "q", "<Esc>" }) do
    M.map(p, lhs, fn, desc)
  end
end

return M
