--- LSP locations as the model reads them: 1-based lines and byte columns (from the server's
--- encoding), paths relative to the cwd with the line's text, in-scope ones only — the others
--- are counted (`outside`), never named — and bounded like the other tools' answers.
local paths = require("minime.editor.paths")
local text = require("minime.editor.text")

local uv = vim.uv or vim.loop

local M = {}

--- Files larger than this are not read for a location's line (nor loaded for a server).
M.MAX_FILE_BYTES = 4 * 1024 * 1024
local MAX_FILE_BYTES = M.MAX_FILE_BYTES

-- The lines of files named by locations: the buffer's when loaded, else the file's (small,
-- regular files only; one read per file per answer).
local function line_reader()
  local cache = {}
  return function(real, row)
    local lines = cache[real]
    if lines == nil then
      lines = false
      local buf = paths.loaded_buffer(real)
      if buf then
        lines = { buf = buf }
      else
        local stat = uv.fs_stat(real)
        if stat and stat.type == "file" and stat.size <= MAX_FILE_BYTES then
          local f = io.open(real, "rb")
          if f then
            lines = vim.split(f:read("*a") or "", "\n", { plain = true })
            f:close()
          end
        end
      end
      cache[real] = lines
    end
    if not lines then
      return ""
    end
    if lines.buf then
      return vim.api.nvim_buf_get_lines(lines.buf, row, row + 1, false)[1] or ""
    end
    return (lines[row + 1] or ""):gsub("\r$", "")
  end
end

--- Turns LSP ranges into what the model reads, keeping in-scope ones and counting the others.
---   local out = lsp.collector(scope, limits)
---   out:add(uri, range, encoding, extra, focus)   -- extra: fields put first (name, kind);
---                                                  -- focus: a symbol's name, see below
---     -> item, true (added) | the item already added at that place, false | nil (outside,
---        or past the limits)
---   out:place(uri, range, encoding, focus) -> { path, line, col, end_line, end_col, text } | nil
---   out:result(key)  -> { [key] = items, outside = n, cut? = "..." }
--- `place` only converts (nil when outside, counting nothing): for ranges that belong to an
--- item, such as the call sites of a call hierarchy answer.
function M.collector(scope, limits)
  local self = { items = {}, seen = {}, outside = 0, dropped = 0, bytes = 0 }
  local read_line = line_reader()
  -- `focus`: servers give a symbol's range from its keyword (`def greet`, pylsp); the column
  -- of its name on that line is where a positional request about it must point.
  function self.place(_, uri, range, encoding, focus)
    if type(uri) ~= "string" or type(range) ~= "table" then
      return nil
    end
    local real, rel = nil, nil
    if uri:match("^file:") then
      real, rel = scope:file(vim.uri_to_fname(uri))
    end
    if not real then
      return nil
    end
    local s, e = range.start or {}, range["end"] or range.start or {}
    local srow, erow = tonumber(s.line) or 0, tonumber(e.line) or tonumber(s.line) or 0
    local sline, eline = read_line(real, srow), read_line(real, erow)
    local function byte(str, character)
      local ok, b = pcall(vim.str_byteindex, str, encoding, tonumber(character) or 0, false)
      return (ok and b or 0) + 1
    end
    local item = { path = text.sanitize(rel), line = srow + 1, col = byte(sline, s.character) }
    if type(focus) == "string" and focus ~= "" then
      local at = sline:find(focus, item.col, true)
      if at then
        item.col = at
      end
    end
    item.end_line = erow + 1
    item.end_col = byte(eline, e.character)
    item.text = text.line(sline, limits.max_line_bytes)
    return item
  end
  function self.add(_, uri, range, encoding, extra, focus)
    if type(uri) ~= "string" or type(range) ~= "table" then
      return
    end
    local placed = self:place(uri, range, encoding, focus)
    if not placed then
      self.outside = self.outside + 1
      return
    end
    local item = extra and vim.deepcopy(extra) or {}
    for k, v in pairs(placed) do
      item[k] = v
    end
    local key = table.concat({ item.name or "", item.path, item.line, item.col }, ":")
    if self.seen[key] then
      return self.seen[key], false
    end
    local size = 80 + #item.path + #item.text + #(item.name or "")
    for _, site in ipairs(type(item.sites) == "table" and item.sites or {}) do
      size = size + 60 + #(site.text or "")
    end
    local full = #self.items >= limits.max_lines
      or (#self.items > 0 and self.bytes + size > limits.max_bytes)
    if full then
      self.dropped = self.dropped + 1
      return
    end
    self.seen[key] = item
    self.bytes = self.bytes + size
    self.items[#self.items + 1] = item
    return item, true
  end
  function self.result(_, key)
    local out = { [key] = self.items, outside = self.outside }
    if self.dropped > 0 then
      out.cut = string.format("%d more not shown (output limit); narrow the request", self.dropped)
    end
    return out
  end
  return self
end

--- Locations of a definition/references answer: Location, Location[] or LocationLink[].
function M.add_locations(out, result, encoding)
  if type(result) ~= "table" then
    return
  end
  if result.uri or result.targetUri then
    result = { result }
  end
  for _, loc in ipairs(result) do
    if loc.targetUri then
      out:add(loc.targetUri, loc.targetSelectionRange or loc.targetRange, encoding)
    else
      out:add(loc.uri, loc.range, encoding)
    end
  end
end

return M
