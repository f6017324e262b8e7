--- What is new among a file's errors and warnings after a turn (minime.feedback.diagnostics
--- runs the pass): what the loaded buffers under the cwd showed when the turn began, and at its
--- end the ones that match none of them by severity, message and the text of their line (a
--- line that moved still matches; each one before matches one after). A file not loaded when
--- the turn began has nothing known of before: only its lines the turn changed count.
local api = vim.api

local M = {}

local WARN = vim.diagnostic.severity.WARN
local NAMES = { [vim.diagnostic.severity.ERROR] = "error", [WARN] = "warning" }

---@class minime.feedback.Before
---@field bufs table<integer, true> the buffers loaded when the turn began
---@field files table<string, table<string, integer>> real path -> its diagnostics' keys, counted

local function line_of(buf, lnum)
  return api.nvim_buf_get_lines(buf, lnum, lnum + 1, false)[1] or ""
end

--- What matches a diagnostic before and after: its severity, its message, its line's text.
local function key_of(d, text)
  return ("%s\0%s\0%s"):format(d.severity, d.message, vim.trim(text))
end

local function under(root, real)
  return real:sub(1, #root + 1) == root .. "/"
end

--- The buffers loaded now, and the errors and warnings of those under `cwd` (one
--- vim.diagnostic.get; a path resolved per buffer that has some).
---@param cwd string
---@return minime.feedback.Before
function M.snapshot(cwd)
  local paths = require("minime.editor.paths")
  local root = paths.realpath(cwd) or cwd
  local snap = { bufs = {}, files = {} }
  for _, buf in ipairs(api.nvim_list_bufs()) do
    if api.nvim_buf_is_loaded(buf) then
      snap.bufs[buf] = true
    end
  end
  local by_buf = {}
  for _, d in ipairs(vim.diagnostic.get(nil, { severity = { min = WARN } })) do
    by_buf[d.bufnr] = by_buf[d.bufnr] or {}
    table.insert(by_buf[d.bufnr], d)
  end
  for buf, list in pairs(by_buf) do
    local real = api.nvim_buf_is_loaded(buf) and paths.realpath(api.nvim_buf_get_name(buf))
    if real and under(root, real) then
      local counts = {}
      for _, d in ipairs(list) do
        local k = key_of(d, line_of(buf, d.lnum))
        counts[k] = (counts[k] or 0) + 1
      end
      snap.files[real] = counts
    end
  end
  return snap
end

--- The rows (0-based) of `now` that are not `base`'s: added or changed lines.
local function changed_rows(base, now)
  local rows = {}
  local a, b = table.concat(base, "\n") .. "\n", table.concat(now, "\n") .. "\n"
  for _, h in
    ipairs(vim.diff(a, b, { result_type = "indices" }) --[[@as integer[][] ]])
  do
    for r = h[3] - 1, h[3] + h[4] - 2 do
      rows[r] = true
    end
  end
  return rows
end

--- The new errors and warnings of `buf` (file `real`), at most `max`, as the host's
--- DiagnosticItem each; `base`: the file's lines when the turn began, if known.
---@param buf integer
---@param real string
---@param snap minime.feedback.Before
---@param base? string[]|false
---@param max integer
---@return table[]
function M.new_items(buf, real, snap, base, max)
  local known = snap.bufs[buf] and vim.deepcopy(snap.files[real] or {}) or nil
  -- Not loaded when the turn began (nothing known of before): only its changed lines count.
  local rows = not known
      and type(base) == "table"
      and changed_rows(base, api.nvim_buf_get_lines(buf, 0, -1, false))
    or nil
  local found = vim.diagnostic.get(buf, { severity = { min = WARN } })
  table.sort(found, function(x, y)
    return x.lnum < y.lnum or (x.lnum == y.lnum and x.col < y.col)
  end)
  local items = {}
  for _, d in ipairs(found) do
    local text = line_of(buf, d.lnum)
    local k = key_of(d, text)
    local new
    if known then
      new = (known[k] or 0) == 0
      if not new then
        known[k] = known[k] - 1 -- each one before matches one after
      end
    else
      new = rows == nil or rows[d.lnum] == true
    end
    if new and #items < max then
      items[#items + 1] = {
        line = d.lnum + 1,
        col = d.col + 1,
        severity = NAMES[d.severity] or "warning",
        message = tostring(d.message):sub(1, 1000),
        source = type(d.source) == "string" and d.source:sub(1, 100) or nil,
        text = text:sub(1, 300),
      }
    end
  end
  return items
end

return M
