--- Markdown in the turn float, block by block: each part of an answer, once complete (up to a
--- blank line outside a fence, a closed fence, or the end of the answer), is parsed on its own as
--- a string — tree-sitter markdown, markdown_inline, and each fence's language by injection — and
--- its captures become extmarks (highlight and conceal) in `M.ns`, in small scheduled steps.
---
--- Why not vim.treesitter.start on the buffer: markdown's parse is not incremental for text
--- appended at the end (a 2,000-line answer re-parses in ~40 ms), so while a turn streams the
--- highlighter's async parse restarted on every batch, never caught up and burnt 5 s of CPU
--- against 1 s; and with 'conceallevel' 2 its conceal_lines made Neovim re-parse per line for
--- every line height it computed (230 ms a batch). A finished block never changes (only its rows
--- move, which extmarks follow), so it is parsed once, off the batch that completed it, and what
--- is drawn costs nothing more than any other extmark. Without a markdown parser: plain text.
local api = vim.api

local M = {}

--- The highlights and conceals.
M.ns = api.nvim_create_namespace("minime.turn.markdown")
--- One mark per block waiting to be (or being) highlighted: its rows, wherever edits move them.
M.ns_pending = api.nvim_create_namespace("minime.turn.markdown.pending")
local ns, ns_pending = M.ns, M.ns_pending

--- Failures of the scheduled steps, newest last (capped): they never reach the user.
---@type string[]
M.errors = {}

-- Extmarks set per scheduled step: ~1 ms of work, so a long block never stalls the editor.
local STEP = 500
-- A block larger than this stays plain: one text without a blank line (a 160 KB stream of one
-- paragraph) is not worth the parse.
local MAX_BYTES = 100000

--- C memory a block's parse holds (its parser and trees) beyond what Lua counts, freed only
--- when Lua's collector gets to the userdata, whose pace counts Lua's own bytes alone: ~21 KiB
--- for a one-line block (markdown + markdown_inline) and ~150 bytes per byte of a longer one
--- (a 300-line paragraph of 4.7 KB: ~680 KiB). Owed to the collector once the parse is done
--- and paid in incremental steps of GC_STEP_KIB, one per scheduled step (never a full
--- collection), so that a day of turns does not pile them up: without it Neovim grew
--- 1.08-1.17x from 30 to 300 echo turns; with only the one-line figure, 1.17-1.19x over 300
--- turns with a 300-line answer each (malloc's free space doubling: each turn's ~700 KiB left
--- for a later cycle, other allocations settling between).
M.PARSE_KIB = 24
M.PARSE_BYTES = 150
-- Owed KiB paid per scheduled step: the collector's work for it is within the step's budget.
local GC_STEP_KIB = 32
-- KiB owed to the collector for the parses done.
local gc_debt = 0

-- Steps more, once the debt is paid, until the collector's cycle ends: the parses' garbage is
-- only freed at a cycle's end, which a big heap may not reach within the debt (bounded).
local GC_FINISH_STEPS = 64
local gc_finish = 0

local function pay_gc()
  if gc_debt > 0 then
    local kib = math.min(gc_debt, GC_STEP_KIB)
    gc_debt = gc_debt - kib
    local ended = collectgarbage("step", kib)
    gc_finish = (gc_debt == 0 and not ended) and GC_FINISH_STEPS or 0
  elseif gc_finish > 0 then
    gc_finish = collectgarbage("step", GC_STEP_KIB) and 0 or gc_finish - 1
  end
end

local function record(err)
  M.errors[#M.errors + 1] = tostring(err)
  if #M.errors > 20 then
    table.remove(M.errors, 1)
  end
end

---@type boolean?
local available

--- Whether Neovim has the markdown parsers (it bundles them; a build may not).
---@return boolean
function M.available()
  if available == nil then
    local function has(lang)
      local ok, loaded = pcall(vim.treesitter.language.add, lang)
      return ok and loaded == true
    end
    available = has("markdown") and has("markdown_inline")
  end
  return available
end

---@param buf integer
---@param mark integer
---@return integer? srow, integer? erow
local function rows_of(buf, mark)
  if not api.nvim_buf_is_valid(buf) then
    return nil
  end
  local m = api.nvim_buf_get_extmark_by_id(buf, ns_pending, mark, { details = true })
  if not m[1] then
    return nil -- the buffer was cleared (a new conversation)
  end
  return m[1], m[3].end_row
end

--- The captures of a parsed block as rows relative to it: {r1, c1, r2, c2, group, conceal,
--- priority}.
---@param parser vim.treesitter.LanguageTree
---@param src string
local function captures(parser, src)
  local out = {}
  parser:for_each_tree(function(tree, ltree)
    local lang = ltree:lang()
    local query = vim.treesitter.query.get(lang, "highlights")
    if not query then
      return
    end
    -- An injected language (a fence's) draws over markdown's own raw-block highlight.
    local base = vim.hl.priorities.treesitter + (lang == "markdown" and 0 or 1)
    for id, node, metadata in query:iter_captures(tree:root(), src, 0, -1) do
      local name = query.captures[id]
      local own = metadata[id] or {}
      local conceal = own.conceal or metadata.conceal
      if name:sub(1, 1) ~= "_" and name ~= "spell" and name ~= "nospell" then
        local r1, c1, r2, c2 = node:range()
        local group = name ~= "conceal" and ("@" .. name .. "." .. lang) or nil
        if group or conceal then
          local priority = tonumber(own.priority or metadata.priority) or base
          out[#out + 1] = { r1, c1, r2, c2, group, conceal, priority }
        end
      end
    end
  end)
  return out
end

-- The work: one queue for every buffer, run by one worker that yields to the editor every
-- BUDGET_NS (a probe waits at most about that long), merging adjacent blocks not yet started so
-- that a fast stream's many small blocks cost one parse. A job goes "new" → "parsing" (an
-- async parse of a large block) → "paint" (its extmarks, a few hundred at a time) → done.
local BUDGET_NS = 3e6
-- A block up to this size is parsed at once (about 1 ms); a larger one in Neovim's async slices.
local SYNC_BYTES = 4000
-- Adjacent blocks are merged up to this many rows.
local MERGE_ROWS = 40

---@class minime.turn.MarkdownJob
---@field buf integer
---@field mark integer
---@field state "new"|"parsing"|"paint"|"done"
---@field caps? table[]
---@field next? integer

---@type minime.turn.MarkdownJob[]
local jobs = {}
local ticking = false

local function drop(job)
  job.state = "done"
  if api.nvim_buf_is_valid(job.buf) then
    pcall(api.nvim_buf_del_extmark, job.buf, ns_pending, job.mark)
  end
end

--- Set up to STEP of the job's extmarks.
local function paint(job)
  local srow = rows_of(job.buf, job.mark)
  if not srow then
    return drop(job)
  end
  local caps, first = job.caps, job.next or 1
  local last = math.min(first + STEP - 1, #caps)
  for i = first, last do
    local c = caps[i]
    pcall(api.nvim_buf_set_extmark, job.buf, ns, srow + c[1], c[2], {
      end_row = srow + c[3],
      end_col = c[4],
      hl_group = c[5],
      conceal = c[6],
      priority = c[7],
      strict = false,
    })
  end
  job.next = last + 1
  if last >= #caps then
    drop(job)
  end
end

local resume

--- Parse the job's block: at once if small, else asynchronously (the worker waits for it).
local function parse(job)
  local srow, erow = rows_of(job.buf, job.mark)
  if not srow then
    return drop(job)
  end
  local src = table.concat(api.nvim_buf_get_lines(job.buf, srow, erow + 1, false), "\n")
  if #src > MAX_BYTES or not src:find("%S") then
    return drop(job)
  end
  local parser = vim.treesitter.get_string_parser(src, "markdown")
  if M.PARSE_KIB > 0 then -- paid from the next step on, once this parser is garbage
    gc_debt = gc_debt + M.PARSE_KIB + math.floor(#src * M.PARSE_BYTES / 1024)
  end
  local function parsed(err, trees)
    if err or not trees then
      return drop(job) -- timed out ('redrawtime'): the block stays plain
    end
    local ok, caps = pcall(captures, parser, src)
    if not ok then
      record(caps)
      return drop(job)
    end
    job.caps, job.state = caps, "paint"
  end
  if #src <= SYNC_BYTES then
    parsed(nil, parser:parse(true))
    return
  end
  job.state = "parsing"
  parser:parse(true, function(err, trees)
    parsed(err, trees)
    resume()
  end)
end

local function tick()
  ticking = false
  local start = vim.uv.hrtime()
  pay_gc()
  while jobs[1] and vim.uv.hrtime() - start < BUDGET_NS do
    local job = jobs[1]
    if job.state == "parsing" then
      return -- its callback resumes the worker
    end
    local ok, err = pcall(job.state == "new" and parse or paint, job)
    if not ok then
      record(err)
      drop(job)
    end
    if job.state == "done" then
      table.remove(jobs, 1)
    end
  end
  resume()
end

--- Run the worker again soon (after what the editor has waiting), if there is work.
resume = function()
  local job = jobs[1]
  if
    not ticking and (job and job.state ~= "parsing" or not job and (gc_debt > 0 or gc_finish > 0))
  then
    ticking = true
    vim.schedule(tick)
  end
end

--- Highlight rows [srow, erow] (0-based, inclusive) of `buf`, soon, off this call.
---@param buf integer
---@param srow integer
---@param erow integer
function M.queue(buf, srow, erow)
  if erow < srow or not M.available() then
    return
  end
  local last = jobs[#jobs]
  if last and last.buf == buf and last.state == "new" then
    local from, to = rows_of(buf, last.mark)
    if from and to + 1 == srow and erow - from < MERGE_ROWS then -- the next rows: one parse
      api.nvim_buf_set_extmark(buf, ns_pending, from, 0, { id = last.mark, end_row = erow })
      return
    end
  end
  local mark =
    api.nvim_buf_set_extmark(buf, ns_pending, srow, 0, { end_row = erow, strict = false })
  jobs[#jobs + 1] = { buf = buf, mark = mark, state = "new" }
  resume()
end

local warmed = false

--- Load the parsers and compile the queries now, one per scheduled step: the first use costs
--- ~100 ms in all (markdown's highlights query alone ~50 ms to compile), which would otherwise
--- fall on the first block of the first answer. Called when a turn's buffer is made (the first
--- ask, while the agent starts); once per Neovim.
function M.warm()
  if warmed then
    return
  end
  warmed = true
  local steps = {
    function()
      return M.available() and vim.treesitter.query.get_files("markdown", "highlights")
    end,
    function()
      return vim.treesitter.query.get("markdown", "highlights")
    end,
    function()
      return vim.treesitter.query.get("markdown", "injections")
    end,
    function()
      return vim.treesitter.query.get("markdown_inline", "highlights")
    end,
    function()
      return vim.treesitter.query.get("markdown_inline", "injections")
    end,
  }
  local i = 0
  local function step()
    i = i + 1
    local ok, more = pcall(steps[i])
    if ok and more and steps[i + 1] then
      vim.schedule(step)
    end
  end
  vim.schedule(step)
end

-- The answer's text blocks as they stream (called by minime.ui.turn.document) ------------------

--- A text block starts on the turn's last line.
---@param t minime.turn.Turn
function M.open(t)
  t.md_from, t.md_scan, t.md_fence = t.row, t.row, nil
end

local function fence_of(line)
  return line:match("^ ? ? ?(```+)") or line:match("^ ? ? ?(~~~+)")
end

--- Text went in: queue what is complete — up to the last blank line outside a fence or the last
--- closing fence among the lines finished since the last call (O(new lines)).
---@param t minime.turn.Turn
function M.grow(t)
  local from = t.md_from
  if not from or t.row <= t.md_scan then
    return
  end
  local boundary
  local lines = api.nvim_buf_get_lines(t.buf, t.md_scan, t.row, false)
  for i, line in ipairs(lines) do
    local fence = t.md_fence
    if fence then
      local f = fence_of(line)
      if f and f:sub(1, 1) == fence:sub(1, 1) and #f >= #fence and line:match("^%s*[`~]+%s*$") then
        t.md_fence, boundary = nil, t.md_scan + i - 1
      end
    else
      local f = fence_of(line)
      if f then
        t.md_fence = f
      elseif not line:find("%S") then
        boundary = t.md_scan + i - 1
      end
    end
  end
  t.md_scan = t.row
  if boundary then
    M.queue(t.buf, from, boundary)
    t.md_from = boundary + 1
  end
end

--- The text (or thinking) block ends (another block starts, or the turn ends): queue the rest.
---@param t minime.turn.Turn
function M.close(t)
  local from = t.md_from
  if not from then
    return
  end
  t.md_from, t.md_scan, t.md_fence = nil, nil, nil
  -- The last line, when empty, is where the next block goes (a tool's header line, whose file
  -- names are no markdown: `__init__.py` is no bold "init"): not this block's.
  local last = t.col == 0 and t.row - 1 or t.row
  M.queue(t.buf, from, last)
end

return M
