---@mod minime minime.nvim: the mini-me agent (mm) in Neovim, over ACP.
local config = require("minime.config")

local M = {}

M.min_version = "0.10"

---@param opts? minime.Config
function M.setup(opts)
  if vim.fn.has("nvim-" .. M.min_version) == 0 then
    vim.notify(("minime needs Neovim %s or newer"):format(M.min_version), vim.log.levels.ERROR)
    return
  end
  config.setup(opts)
  local ok_tools, err = pcall(require("minime.tools").register_user_tools, config.options.tools or {})
  if not ok_tools then
    vim.notify("minime: " .. tostring(err), vim.log.levels.ERROR)
  end
  local ok_turn, turn = pcall(require, "minime.ui.turn")
  if ok_turn and turn.setup then
    turn.setup(config.options.window)
    turn.on_cancel = function(key)
      M.cancel(key)
    end
  end
  pcall(function()
    require("minime.ui.permission").setup({ focus = config.options.permission.focus })
  end)
  local host = require("minime.host")
  if host.chan then
    host.send_setup()
  end
end

local function relative(path, cwd)
  if path:sub(1, #cwd + 1) == cwd .. "/" then
    return path:sub(#cwd + 2)
  end
  return path
end

--- The prompt with the selected lines as context, naming file and lines.
local function with_context(text, range, cwd)
  if not range then
    return text, nil
  end
  local buf = vim.api.nvim_get_current_buf()
  local lines = vim.api.nvim_buf_get_lines(buf, range[1] - 1, range[2], false)
  local name = vim.api.nvim_buf_get_name(buf)
  local path = name ~= "" and relative(vim.fn.fnamemodify(name, ":p"), cwd) or "[No Name]"
  local fence = ("```%s"):format(vim.bo[buf].filetype or "")
  local context = ("%s\n\nFrom %s, lines %d-%d:\n%s\n%s\n```"):format(
    text,
    path,
    range[1],
    range[2],
    fence,
    table.concat(lines, "\n")
  )
  local selection = { bufnr = buf, path = name, start_line = range[1], end_line = range[2] }
  return context, selection
end

--- What the host needs to run an ask in `cwd`.
local function agent_payload(cwd)
  local o = config.options
  if o.agent and o.agent.cmd then
    return { agent_cmd = o.agent.cmd, agent_env = o.agent.env, discovery = o.discovery }
  end
  local mm = config.mm()
  local agent_file = config.agent_file(cwd)
  if not mm and not o.mm then
    -- No mm anywhere: the bundled offline demo agent, clearly labelled.
    local demo_mm, demo_config = config.demo()
    return { mm = demo_mm, config = agent_file or demo_config, demo = true, discovery = o.discovery }
  end
  if not mm then
    error(("mm not found: %s is not executable (set `mm` or $MM_BIN)"):format(o.mm), 0)
  end
  if not agent_file then
    error("no agent file found: set `config` in require('minime').setup{} (see :h minime-config)", 0)
  end
  return { mm = mm, config = agent_file, discovery = o.discovery }
end

--- Send `text` to the agent for the current cwd (window- and tab-local cwds count).
---@param text? string
---@param range? integer[] {first, last} lines of the current buffer sent as context
function M.ask(text, range)
  if not text or vim.trim(text) == "" then
    require("minime.ui.input").open({
      prompt_title = " minime ",
      on_submit = function(input)
        if input and vim.trim(input) ~= "" then
          M.ask(input, range)
        end
      end,
    })
    return
  end
  local cwd = vim.fn.getcwd()
  local ok, err = pcall(function()
    local payload = agent_payload(cwd)
    local context, selection = with_context(text, range, cwd)
    payload.cwd = cwd
    payload.prompt = text
    payload.context = context
    payload.selection = selection
    payload.tool_ctx = config.tool_ctx(cwd)
    payload.ready_timeout = config.options.ready_timeout
    payload.cancel_timeout = config.options.cancel_timeout
    if payload.demo then
      vim.notify("minime: no mm found — using the offline demo agent", vim.log.levels.INFO)
    end
    require("minime.host").notify("ask", payload)
  end)
  if not ok then
    M.notify("minime: " .. tostring(err), "error")
  end
end

local function host_op(op, payload)
  local ok, err = pcall(require("minime.host").notify, op, payload or {})
  if not ok then
    M.notify("minime: " .. tostring(err), "error")
  end
end

function M.cancel(cwd)
  host_op("cancel", { cwd = cwd or vim.fn.getcwd() })
end

function M.reset()
  host_op("reset", { cwd = vim.fn.getcwd() })
end

function M.stop()
  host_op("stop", {})
end

function M.log()
  host_op("log", {})
end

--- Reopen the last turn's float.
function M.show()
  require("minime.ui.turn").reopen_last()
end

function M.statusline()
  return require("minime.status").statusline()
end

-- Called by the host ----------------------------------------------------------------

---@param message string
---@param level? "error"|"warn"|"info"
function M.notify(message, level)
  local levels = { error = vim.log.levels.ERROR, warn = vim.log.levels.WARN, info = vim.log.levels.INFO }
  vim.notify(message, levels[level or "error"] or vim.log.levels.ERROR)
end

---@param pid integer the agent's process-group id
function M.track_agent(pid)
  require("minime.host").agents[pid] = true
end

---@param req table a permission request (see :h minime-permission)
function M.permission(req)
  require("minime.ui.permission").open(req, function(option_id, remember)
    host_op("permission_answer", { id = req.id, option_id = option_id, remember = remember })
  end)
end

---@param lines string[]
function M.show_log(lines)
  local host = require("minime.host")
  vim.list_extend(lines, { "", "# Python host stderr" })
  vim.list_extend(lines, host.stderr)
  vim.cmd("botright new")
  local buf = vim.api.nvim_get_current_buf()
  vim.bo[buf].buftype = "nofile"
  vim.bo[buf].bufhidden = "wipe"
  vim.bo[buf].swapfile = false
  vim.b[buf].minime = "log"
  vim.api.nvim_buf_set_name(buf, "minime://log")
  local clean = {}
  for _, line in ipairs(lines) do
    for piece in (line .. "\n"):gmatch("(.-)\n") do
      table.insert(clean, piece)
    end
  end
  vim.api.nvim_buf_set_lines(buf, 0, -1, false, clean)
  vim.bo[buf].modifiable = false
end

return M
