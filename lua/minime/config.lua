---@mod minime.config Options and their defaults (see :h minime-config).
--- The one owner of the options: every module reads `require("minime.config").options` when
--- it needs a value (never a copy taken at load or pushed by setup), so a second setup() is
--- what the next float, prompt or ask uses. Cheap to load: setup() requires it at start-up.
local M = {}

--- The defaults, built afresh at each call: setup() runs at every start-up, and building
--- this small table costs less than a deep copy of it (nothing is shared between calls).
---@return minime.Config
local function defaults()
  ---@class minime.Config
  return {
    -- The agent: a name, lua/minime/agents/<name>.lua on 'runtimepath' (the shipped ones:
    -- :h minime-agents), or a definition inline:
    -- { cmd = { "node", "agent.js" }, env = { KEY = "v" } }. See lua/minime/agents/init.lua.
    agent = "mm",
    -- agent "mm": the binary. nil: $MM_BIN, then `mm` on PATH; when none is found, the bundled
    -- offline demo agent is used (and labelled as such).
    mm = nil,
    -- agent "mm": the agent file, a path or function(cwd) returning one. nil: the first of
    -- <cwd>/agent.yaml, <cwd>/.mm/agent.yaml, stdpath("config")/minime/agent.yaml.
    config = nil,
    -- Client-tool discovery. nil: what mm's agent file names (acp.clientTools.discovery), else
    -- "meta". An explicit value that conflicts with the file is a warning.
    discovery = nil,
    -- How the agent reaches the editor tools: "client" (mm's client-tools extension), "mcp" (an
    -- MCP server of each session, for any ACP agent) or "none". nil: the agent definition's
    -- `editor_tools` (mm: "client", the others: "mcp"; unsaid: "client" with an agent_file).
    editor_tools = nil,
    -- Your own MCP servers, passed to every session: { name, command, args, env = { K = "v" } }
    -- (stdio) or { name, url, headers = { K = "v" } } (http: only to an agent that takes it).
    mcp_servers = {},
    -- The session mode set when a session opens (`session/set_mode`), e.g. "default" for
    -- claude-agent-acp. nil: the agent definition's `mode`. :MiniMeMode changes it later.
    mode = nil,
    -- Python for the host. nil: the plugin's own venv if present, else
    -- g:python3_host_prog, else python3.
    python = nil,
    -- "job": the Lua layer starts `python -m minime.nvim` (default). "rplugin": Neovim's python3
    -- host after :UpdateRemotePlugins.
    host = "job",
    -- Start the host, and the cwd's agent and session, while the first ask is being typed (the
    -- command line starts `:MiniMe`, the input float opens, <Plug>(minime-ask), the toggle).
    warm = true,
    -- An ask while a turn runs in its cwd (or its agent still starts) waits, and is sent when
    -- that turn ends (:MiniMeCancel drops the waiting ones). false: it is refused, its text
    -- kept as the cwd's draft.
    queue = true,
    -- os: a thread not on screen that ends its turn or starts waiting for you also raises a
    -- desktop notification through the terminal while Neovim does not have the focus: true
    -- (OSC 9 for iTerm2, ConEmu and Windows Terminal, else OSC 777), "osc777" or "osc9".
    notify = { os = false },
    -- "always": :MiniMeNew in a git repository gives the new thread a worktree and branch of
    -- its own, as :MiniMeNew worktree does (:h minime-worktrees). false: only when asked.
    worktree = false,
    -- Seconds the agent has to answer `initialize` and `session/new` before the ask fails.
    ready_timeout = 60,
    -- Seconds the agent has to end a turn after `session/cancel`; then the turn ends with an
    -- error and the next ask works.
    cancel_timeout = 30,
    -- layout: "split" (a window at the right, beside the code), "float" (a float over the
    -- code's right edge, full height; "side" is the same) or "center"; width: a fraction
    -- (<= 1) of the editor or columns (nil: 0.4 beside, 0.8 centred); height: "center" only.
    window = { layout = "split", width = nil, height = 0.6, border = "rounded", focus = false },
    -- focus: "agent": the prompt takes the focus only from the conversation float or its
    -- input (true means the same), never from a code window (:MiniMePermission goes to it);
    -- "idle": from any window once nobody types; false: never. key_delay: seconds its keys
    -- wait after it took the focus by itself; idle: seconds since your last key before it
    -- may; timeout: seconds before an unanswered prompt is rejected (nil: never).
    permission = { focus = "agent", key_delay = 0.5, idle = 1, timeout = nil },
    -- Answered without a float: { { pattern = "client: *", decision = "allow" } }: a glob over
    -- the whole title; an allow rule's wildcards never match ; & | < > ` $( or a newline;
    -- `kind` (or mm's "bash: " / "client: " prefix) limits the tool kind (:h minime-rules).
    permission_rules = {},
    -- Show the file each tool call works on (its ACP locations), at its line, in a split
    -- below your code window as the agent reaches it: never focused, never while you type,
    -- only files under the cwd the deny list allows. :MiniMeFollow toggles it.
    follow = false,
    -- Your own tools: { { name, description, input_schema, handler = function(args, ctx) end } }
    tools = {},
    -- Built-in tools to disable: a list of names, or function(cwd) returning one.
    disabled_tools = {},
    -- Buffers the tools never expose (globs on the file name, the cwd-relative path and the
    -- real absolute path; a lone * also matches nothing). nil: require("minime.editor.scope")
    -- .DEFAULT_DENY (.env, *.pem, *.key, id_rsa*, .ssh/, .git/config, histories, …).
    deny = nil,
    -- Lend the agent the ACP file system (fs/read_text_file, fs/write_text_file) through the
    -- buffers, scoped like the tools (the cwd, the deny list). mm ignores it.
    fs = true,
    -- More workspace roots for each new session (ACP additionalDirectories), sent only to an
    -- agent that advertises them: { "~/src/shared-lib" }. The editor's tools keep to the cwd.
    additional_directories = {},
    -- Bounds of one read_buffer result, and of one line in it.
    max_lines = 2000,
    max_bytes = 100000,
    max_line_bytes = 2000,
    -- An `@file` mention (text or image) larger than this is sent as a link, not its content.
    mention_max_bytes = 1000000,
    -- What each thread's session may spend: { cost = 2.00 } (in the agent's currency, as its
    -- usage_update says), { tokens = 200000 }, or both. At 80% a line says so; at 100% the
    -- turn is cancelled and the next ask refused until :MiniMeBudget raises it or :MiniMeReset.
    -- An agent's definition may set its own. nil: none (:h minime-budget).
    budget = nil,
    -- What a turn caused, back to the agent (:h minime-feedback). diagnostics: "show" (the new
    -- errors and warnings of the files it changed, under it; :MiniMeFix sends them), "auto"
    -- (sent by themselves, at most `rounds` times in a row) or false.
    feedback = { diagnostics = "show", rounds = 2 },
    -- feedback: the hunks you reject and the comments you keep (:MiniMeComment!) go with the
    -- thread's next ask. false: they stay with you.
    review = { feedback = true },
  }
end

--- The defaults (for reading: each setup() merges into a fresh copy).
M.defaults = defaults()

---@type minime.Config
M.options = defaults()

-- Options that are tables of fields: anything else there would break every reader.
local SECTIONS = { "window", "permission", "feedback", "review", "notify" }

--- Merge `opts` into the defaults; these are the options from now on. A section given as
--- something other than a table keeps its defaults, and the error names it.
---@param opts? table
---@return minime.Config options
---@return string? error
function M.setup(opts)
  local options, bad = defaults(), {}
  if type(opts) == "table" and next(opts) ~= nil then
    options = vim.tbl_deep_extend("force", options, opts)
  elseif opts ~= nil and type(opts) ~= "table" then
    bad[1] = ("setup() takes a table of options (got %s): the defaults apply"):format(type(opts))
  end
  for _, name in ipairs(SECTIONS) do
    if type(options[name]) ~= "table" then
      bad[#bad + 1] = ("`%s` must be a table (got %s): its defaults apply"):format(
        name,
        type(options[name])
      )
      options[name] = defaults()[name]
    end
  end
  M.options = options
  return options, bad[1] and table.concat(bad, "; ") or nil
end

--- The plugin's root directory (the one holding lua/ and rplugin/).
function M.root()
  local source = debug.getinfo(1, "S").source:sub(2)
  return vim.fn.fnamemodify(source, ":p:h:h:h")
end

--- The tools the user turned off in `cwd` (the host leaves them out of what it offers).
---@param cwd string
---@return string[]
function M.disabled_tools(cwd)
  local disabled = M.options.disabled_tools
  if type(disabled) == "function" then
    disabled = disabled(cwd)
  end
  local names = {}
  for _, name in ipairs(type(disabled) == "table" and disabled or {}) do
    if type(name) == "string" then
      names[#names + 1] = name
    end
  end
  return names
end

--- The editor tools' context for `cwd` (read at each call, never sent to the host).
---@param cwd string
function M.tool_ctx(cwd)
  local o = M.options
  local disabled = M.disabled_tools(cwd)
  return {
    deny = o.deny,
    max_lines = o.max_lines,
    max_bytes = o.max_bytes,
    max_line_bytes = o.max_line_bytes,
    disabled = disabled or {},
  }
end

return M
