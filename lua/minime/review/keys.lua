--- The review's keys in a reviewed buffer: `]h` / `[h` to the next / previous hunk of the
--- review shown (minime.review.current), standing in for the buffer's own while it lasts.
local hunks = require("minime.review.hunks")

local api = vim.api

local M = {}

--- The buffer's own `]h` / `[h` (mini.diff, gitsigns map them per buffer), kept while the
--- review's keys stand in for them: buf -> the maparg() dicts.
---@type table<integer, table[]>
local saved_keys = {}

--- The buffer's own keys back, the review's gone.
---@param buf integer
function M.unmap(buf)
  for _, lhs in ipairs({ "]h", "[h" }) do
    pcall(vim.keymap.del, "n", lhs, { buffer = buf })
  end
  for _, own in ipairs(saved_keys[buf] or {}) do
    pcall(api.nvim_buf_call, buf, function()
      vim.fn.mapset("n", false, own)
    end)
  end
  saved_keys[buf] = nil
end

local function jump(forward)
  local r = require("minime.review").current
  if not r then
    return
  end
  local buf, line = api.nvim_get_current_buf(), vim.fn.line(".")
  local best
  for _, h in ipairs(r.hunks) do
    local row = h.buf == buf and hunks.range(h)
    if row and ((forward and row + 1 > line) or (not forward and row + 1 < line)) then
      if not best or (forward and row < best) or (not forward and row > best) then
        best = row
      end
    end
  end
  if best then
    api.nvim_win_set_cursor(0, { best + 1, 0 })
  end
end

--- The review's keys in `buf` (once; the buffer's own kept for M.unmap).
---@param buf integer
function M.map(buf)
  if saved_keys[buf] then
    return
  end
  saved_keys[buf] = {}
  for lhs, forward in pairs({ ["]h"] = true, ["[h"] = false }) do
    local own = api.nvim_buf_call(buf, function()
      return vim.fn.maparg(lhs, "n", false, true)
    end)
    if own.buffer == 1 then
      table.insert(saved_keys[buf], own)
    end
    vim.keymap.set("n", lhs, function()
      jump(forward)
    end, {
      buffer = buf,
      desc = "minime: " .. (forward and "next" or "previous") .. " hunk of the review",
    })
  end
end

return M
