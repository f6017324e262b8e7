--- What an asking float (minime.ui.ask) shows and where: its buffer filled from the kind's
--- `render`, its window's config from the kind's `win_config` given how many wait behind it,
--- whether its keys work and the seconds left — clear of the cursor's line for a kind that is
--- `placed` (placement.lua) — and drawn again whenever one of those changes.
local focus = require("minime.ui.permission_focus")
local placement = require("minime.ui.placement")
local window = require("minime.ui.window")

local api = vim.api

local M = {}

--- The rows the float must not cover: the cursor's line in the window the user is in (or,
--- when that is the float, the one they came from).
---@param p minime.ask.Ask
---@return integer[]?
local function cursor_rows(p)
  local win = api.nvim_get_current_win()
  if win == p.win then
    win = p.origin and p.origin.win
  end
  return placement.cursor_rows(win)
end

--- The float's config for `lines` now.
---@param a minime.ask.Asker
---@param p minime.ask.Ask
---@param lines string[]
---@return vim.api.keyset.win_config
function M.win_config(a, p, lines)
  local left = p.deadline and math.max(0, math.ceil((p.deadline - focus.now_ms()) / 1000))
  local state = { waiting = #a.queue.waiting, live = focus.live(p), left = left }
  -- The end of every asking float's title: whose thread, when its conversation is not on
  -- screen; how many wait behind it; the seconds before it is refused.
  local suffix = ""
  local threads = package.loaded["minime.threads"]
  local whose = threads and threads.named_off_screen(p.req.thread)
  if whose then
    suffix = suffix .. "· " .. whose .. " "
  end
  if state.waiting > 0 then
    suffix = suffix .. ("(+%d waiting) "):format(state.waiting)
  end
  if left then
    suffix = suffix .. ("· %s in %d s "):format(a.spec.words.refused, left)
  end
  state.suffix = suffix
  local cfg = a.spec.win_config(p, lines, state)
  if type(cfg.footer) == "string" and not state.live then
    cfg.footer = { { cfg.footer, "Comment" } } -- dimmed: its keys do not work yet
  end
  return a.spec.placed and placement.clear_of(cfg, cursor_rows(p)) or cfg
end

--- The kind's rendering of `p` written into its buffer: (its lines, the row before the first
--- item to pick).
---@param a minime.ask.Asker
---@param p minime.ask.Ask
---@return string[] lines, integer first
function M.fill(a, p)
  local lines, marks, first, filetype = a.spec.render(p)
  vim.bo[p.buf].modifiable = true
  api.nvim_buf_set_lines(p.buf, 0, -1, false, lines)
  api.nvim_buf_clear_namespace(p.buf, a.ns, 0, -1)
  for _, m in ipairs(marks or {}) do
    local opts = { end_col = m[3], hl_group = m[4], strict = false }
    api.nvim_buf_set_extmark(p.buf, a.ns, m[1], m[2], opts)
  end
  vim.bo[p.buf].modifiable = false
  if filetype then
    vim.bo[p.buf].filetype = filetype
  end
  return lines, first
end

--- The shown float's config again (its title's count and countdown, its footer, its place).
---@param a minime.ask.Asker
function M.retitle(a)
  local p = a.queue.shown
  if p and p.win and api.nvim_win_is_valid(p.win) then
    local lines = api.nvim_buf_get_lines(p.buf, 0, -1, false)
    window.reconfig(p.win, M.win_config(a, p, lines))
  end
end

--- The float resized to `lines` filled again, the cursor on the first item.
---@param a minime.ask.Asker
---@param p minime.ask.Ask
---@param lines string[]
---@param first integer
function M.refit(a, p, lines, first)
  if p.win and api.nvim_win_is_valid(p.win) then
    window.reconfig(p.win, M.win_config(a, p, lines))
    pcall(api.nvim_win_set_cursor, p.win, { math.min(first + 1, #lines), 0 })
  end
end

--- While the float shows: entering it counts as having had the focus (`p.entered`), and the
--- float of a `placed` kind moves when the cursor's line comes under it (`on_error(err)` when
--- it cannot).
---@param a minime.ask.Asker
---@param p minime.ask.Ask
---@param on_error fun(err: any)
function M.follow_cursor(a, p, on_error)
  api.nvim_clear_autocmds({ group = a.moves })
  api.nvim_create_autocmd({ "CursorMoved", "CursorMovedI", "WinScrolled", "WinEnter" }, {
    group = a.moves,
    callback = function()
      if a.queue.shown ~= p or not (p.win and api.nvim_win_is_valid(p.win)) then
        return
      end
      if api.nvim_get_current_win() == p.win then
        p.entered = true
        return
      end
      if not a.spec.placed then
        return
      end
      local rows, cfg = cursor_rows(p), api.nvim_win_get_config(p.win)
      local moved = rows and placement.clear_of(vim.deepcopy(cfg), rows)
      if moved and (moved.row ~= cfg.row or moved.height ~= cfg.height) then
        local ok, err = pcall(M.retitle, a)
        if not ok then
          on_error(err)
        end
      end
    end,
  })
end

return M
