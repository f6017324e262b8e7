---@mod minime.config Options and their defaults (see :h minime-config).
--- The one owner of the options: every module reads `require("minime.config").options` when
--- it needs a value (never a copy taken at load or pushed by setup), so a second setup() is
--- what the next float, prompt or ask uses. Cheap to load: setup() requires it at start-up.
local M = {}

--- The defaults, built afresh at each call: setup() runs at every start-up, and building
--- this small table costs less than a deep copy of it (nothing is shared between calls).
--- Each field's `---` lines are its entry in :h minime-config, in help markup: scripts/gen-help
--- writes that section from them (tests/test_help_generated.py checks it is current).
---@return minime.Config
local function defaults()
  ---@class minime.Config
  return {
    --- The agent: the name of a definition, `lua/minime/agents/<name>.lua` on 'runtimepath'
    --- (the shipped ones: |minime-agents|), or a definition inline:
    --- `{ cmd = { "node", "agent.js" }, env = { KEY = "v" } }` (|minime-agent-definition|).
    --- An unknown name is an error listing the agents found.
    agent = "mm",
    --- Agent `"mm"`: the mm binary. nil: `$MM_BIN`, then `mm` on PATH. When neither exists,
    --- asks go to the offline demo agent (`demo/mm`, |minime-demo|), labelled as such.
    mm = nil,
    --- Agent `"mm"`: the agent file (mm's `-config`): a path, or a function of the cwd
    --- returning one. nil: the first that exists of `<cwd>/agent.yaml`,
    --- `<cwd>/.mm/agent.yaml`, `stdpath("config")/minime/agent.yaml`.
    config = nil,
    --- `"request"` or `"meta"`: how mm discovers the client tools (|minime-discovery|). nil:
    --- what the agent file says (`acp.clientTools.discovery`), else mm's default `"meta"`. A
    --- value that conflicts with the agent file is a warning and the file wins: mm gives no
    --- tools to a client in the wrong mode. For agents without an agent file it is used as
    --- given (over the definition's `discovery`).
    discovery = nil,
    --- How the agent reaches the |minime-tools|: `"client"` (mm's client-tools extension),
    --- `"mcp"` (an MCP server of each session, for any ACP agent: |minime-mcp|) or `"none"`.
    --- nil: the agent definition's `editor_tools` (mm: `"client"`; claude, codex, qwen,
    --- opencode, gemini, sdk_example: `"mcp"`; a definition that says nothing: `"client"` if
    --- it names an `agent_file`, else `"mcp"`). `setup{ editor_tools = "mcp" }` gives mm the
    --- MCP server instead. With `"mcp"` the client-tools extension is not offered: no model
    --- sees a tool twice.
    editor_tools = nil,
    --- Your own MCP servers, passed to every session with the editor's (and after a
    --- definition's own `mcp_servers`): >lua
    ---   mcp_servers = {
    ---     { name = "files", command = "npx", args = { "-y", "some-mcp" },
    ---       env = { TOKEN = os.getenv("TOKEN") } },           -- stdio
    ---     { name = "docs", url = "http://127.0.0.1:8080/mcp",
    ---       headers = { Authorization = "Bearer ..." } },    -- http
    ---   }
    --- <
    --- They go to the agent in ACP's shape (`env` and `headers` as lists of `{name, value}`).
    --- An http server goes only to an agent that advertises `mcpCapabilities.http`; to
    --- another, a warning names it. A bad entry fails the ask saying which.
    --- `:checkhealth minime` says which path the agent's tools take and times the editor's
    --- server to its `tools/list`.
    mcp_servers = {},
    --- The session mode set when a session opens (`session/set_mode`, before its first
    --- prompt), e.g. `"default"` for claude-agent-acp. nil: the agent definition's `mode`
    --- (claude: `"default"`, codex: `"read-only"`). A mode the agent does not offer is a
    --- warning, once, naming the modes it offers. Why: claude-agent-acp starts in `auto` and
    --- codex-acp in `agent` ("Auto review": a reviewer model decides; `auto` in the older
    --- `@zed-industries/codex-acp`), where no permission prompt ever comes. |:MiniMeMode|
    --- changes it later.
    mode = nil,
    --- The interpreter of the host. nil: the plugin's `.venv`, else |g:python3_host_prog|,
    --- else `python3`.
    python = nil,
    --- `"job"`: the Lua layer starts `python -m minime.nvim` with |jobstart()| (no
    --- |:UpdateRemotePlugins|). `"rplugin"`: Neovim's shared python3 host, after
    --- |:UpdateRemotePlugins|.
    host = "job",
    --- Start the first ask while it is typed: the Python host when the command line reads
    --- `:MiniMe` (it imports the ACP SDK: a few hundred ms), the current thread's agent and
    --- session too at `:MiniMeA` (|:MiniMeAsk|),
    --- when the input float opens (|<Plug>(minime-ask)|) or |:MiniMeToggle| is used, so the
    --- ask meets a ready session at <CR>. Nothing starts in an idle Neovim, and only
    --- `initialize` and `session/new` reach the agent: an ask that is abandoned sends nothing
    --- (the warmed agent stays, as after any ask, until |:MiniMeStop|). A warm-up that fails
    --- says nothing; the ask that follows starts the agent again and says what went wrong.
    --- `false`: nothing starts before an ask.
    warm = true,
    --- An ask while a turn runs in its thread, or while its agent still starts, waits and is
    --- sent when that turn ends (in order, each with the selection and context it was made
    --- with): |minime-queue|. `false`: it is refused with a message and its text kept as the
    --- thread's draft (|minime-draft|).
    queue = true,
    --- `os`: a thread not on screen that ends its turn or starts waiting for you also raises
    --- a desktop notification through the terminal while Neovim does not have the focus:
    --- `true` (OSC 9 for iTerm2, ConEmu and Windows Terminal, else OSC 777), `"osc777"` or
    --- `"osc9"`. See |minime-notify-os|.
    notify = { os = false },
    --- `"always"`: |:MiniMeNew| in a git repository gives each new thread a worktree and
    --- branch of its own, as `:MiniMeNew worktree` does (|minime-worktrees|); outside a
    --- repository the thread is a plain one. `false`: only when asked.
    worktree = false,
    --- Seconds the agent has to answer `initialize` and `session/new` before the ask fails
    --- and the agent is ended.
    ready_timeout = 60,
    --- Seconds the agent has to end a turn after `session/cancel`; then the turn ends with an
    --- error and the next ask works.
    cancel_timeout = 30,
    --- The conversation's window (|minime-turn|).
    --- *minime-config-window.layout*
    --- `layout`: `"split"`, a window at the editor's right, beside the code (|minime-panel|);
    --- `"float"` (or `"side"`), a float full height along the editor's right edge (its
    --- border's right edge is the editor's), over the code; or `"center"`, a float in the
    --- middle of the editor. Changed mid-session, it applies at the next showing.
    --- *minime-config-window.width*
    --- `width`: a fraction of the editor (<= 1) or columns; nil: 0.4 beside (split or float,
    --- at least 20), 0.8 centred. A width you give the panel (`:vertical resize 80`) is the
    --- one it opens with next, while this option stays the same; the code columns make room
    --- for it in their proportions and get their widths back when it closes. `height` (the
    --- same units) is used by `"center"` only. `focus`: enter it when it opens; else it never
    --- takes focus by itself.
    window = { layout = "split", width = nil, height = 0.6, border = "rounded", focus = false },
    --- The permission float (|minime-permission|).
    --- `focus` (|minime-permission-focus|): `"agent"` (`true` means it too): the float takes
    --- the focus only from the conversation, its input or another asking float (a prompt's, a
    --- question's), when you are not typing there; never from a code window. `"idle"`: from
    --- any window when nobody types (the earlier rule). `false`: never.
    --- `key_delay`: seconds a float that took focus by itself ignores keys (its footer is
    --- dimmed until they work). `idle`: seconds since your last key before a float may take
    --- focus. `timeout`: seconds after which an unanswered prompt is rejected, counted from
    --- when its float shows (the title counts down); nil: never.
    permission = { focus = "agent", key_delay = 0.5, idle = 1, timeout = nil },
    --- Requests answered without a float: a list of rules such as
    --- `{ pattern = "bash: git status*", decision = "allow" }` (or `"reject"`; an optional
    --- `kind` limits the tool kinds). `pattern` is a glob over the whole title. `allow`
    --- answers the agent's allow-once option, `reject` its reject-once option. The first rule
    --- that answers wins. See |minime-rules|: an allow rule's wildcards never match shell
    --- control characters, and rules match the tool kind.
    permission_rules = {},
    --- Follow the agent: the file each tool call works on (its ACP `locations`) is shown at
    --- that line, as the agent reaches it, in a split below your code window, reused for each
    --- one; never focused, never while you type, only files under the cwd that |minime-deny|
    --- allows. See |minime-follow|; |:MiniMeFollow| toggles it.
    follow = false,
    --- Your own tools: a list of `{ name, description, input_schema, handler }`, `handler`
    --- a `function(args, ctx)` (|minime-user-tools|). A bad one is reported by setup().
    tools = {},
    --- Built-in tool names to turn off, or a function of the cwd returning them. In `request`
    --- discovery they are not offered; in `meta` discovery a call to one is refused.
    disabled_tools = {},
    --- Glob patterns of files never exposed to the agent, nor sent by you (|minime-deny|),
    --- matched (case-insensitively) on the file name, the path relative to the cwd and the
    --- real absolute path, so `**/.ssh/**` holds with the cwd inside ~/.ssh. A lone `*` also
    --- matches nothing (`id_rsa*` denies `id_rsa`). nil: the defaults of
    --- `require("minime.editor.scope").DEFAULT_DENY`:
    ---@eval "`" .. table.concat(require("minime.editor.scope").DEFAULT_DENY, "`, `") .. "`."
    deny = nil,
    --- Lend the agent the ACP file system (`fs/read_text_file`, `fs/write_text_file`) through
    --- the buffers, scoped like the tools (the cwd, the deny list): |minime-fs|. mm ignores
    --- it.
    fs = true,
    --- More workspace roots for each new session (ACP `additionalDirectories`, absolute; `~`
    --- expanded), e.g. `{ "~/src/shared-lib" }`, sent in `session/new` only to an agent that
    --- advertises `sessionCapabilities.additionalDirectories` (else logged and left out).
    --- They widen the agent's own scope; the editor's tools and |minime-fs| keep to the
    --- session's cwd.
    additional_directories = {},
    --- Lines in one `read_buffer` answer.
    max_lines = 2000,
    --- Bytes in one `read_buffer` answer.
    max_bytes = 100000,
    --- Bytes of one line in an answer (longer: cut, and said).
    max_line_bytes = 2000,
    --- An `@file` mention (text or image) larger than this is sent as a `resource_link` (an
    --- image: not at all), and a message says so (|minime-mentions|).
    mention_max_bytes = 1000000,
    --- What each thread's session may spend: a cost, `{ cost = 2.00 }` (in the agent's
    --- currency, as its `usage_update` says), tokens, `{ tokens = 200000 }`, or both. An agent definition's own
    --- `budget` wins over this one (|minime-agent-definition|). At 80% one line says so, at
    --- 100% the running turn is cancelled and the thread refuses asks until |:MiniMeBudget|
    --- raises it or |:MiniMeReset|. nil: none. See |minime-budget|.
    budget = nil,
    --- What a turn caused, back to the agent (|minime-feedback|). `diagnostics`: `"show"`:
    --- the new errors and warnings of the files it changed are shown under it, and
    --- |:MiniMeFix| sends them; `"auto"`: sent by themselves too, at most `rounds` times in a
    --- row (each said); `false`: not looked at.
    feedback = { diagnostics = "show", rounds = 2 },
    --- `feedback`: the hunks you reject (|:MiniMeReject|) and the comments you keep
    --- (|:MiniMeComment|!) go with the thread's next ask (|minime-feedback|); `false`: they
    --- stay with you.
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
