--- How the worktree code runs git: with nothing the repository configures executed.
---
--- An agent that can write files in a work tree can write `.git/config`, and several of its
--- settings make git run a program: core.fsmonitor, hooks (`git worktree add` runs
--- post-checkout; a ref update runs reference-transaction), clean/smudge/process filters named
--- by .gitattributes, a promisor remote's lazy fetch. So:
---   * Every command runs with M.FLAGS (hooks and fsmonitor off, no transport, no automatic
---     gc), no system or global config, no transport at all and no GIT_* variable of Neovim's
---     environment; bounded (M.TIMEOUT_MS, then killed) and off the main loop.
---   * Commands that read or write work tree files (checkout-index, ls-files) run with GIT_DIR
---     set to a directory of the plugin's (M.private: a config that states the object format
---     and nothing else) on the user's objects and the worktree's own index: no config defines a
---     filter there, so a `.gitattributes` naming one runs nothing (M.run_in).
---   * Commands that must use the repository (worktree add/remove, branch -D, rev-parse) read
---     its config and write its refs, and never look at a file's content: `worktree add
---     --no-checkout` writes no file, `worktree remove --force` runs no status.
--- This is the hardening of lua/minime/git.lua (issue 28) for the worktrees' commands: once
--- that module is on main, `run` and `run_in` here are its functions of the same names.
local uv = vim.uv

local M = {}

M.TIMEOUT_MS = 10000

M.FLAGS = {
  "-c",
  "core.fsmonitor=false",
  "-c",
  "core.hooksPath=/dev/null",
  "-c",
  "protocol.allow=never",
  "-c",
  "gc.auto=0",
  "-c",
  "maintenance.auto=false",
  "-c",
  "submodule.recurse=false",
}

--- Neovim's environment without GIT_*, with what keeps every configuration but the
--- repository's (or the plugin's) out; `extra` on top.
local function environment(extra)
  local env = {}
  for k, v in pairs(uv.os_environ()) do
    if not k:match("^GIT_") then
      env[k] = v
    end
  end
  env.GIT_CONFIG_NOSYSTEM = "1"
  env.GIT_CONFIG_GLOBAL = "/dev/null"
  env.GIT_ATTR_NOSYSTEM = "1"
  env.GIT_ALLOW_PROTOCOL = "" -- set and empty: every transport refused
  env.GIT_TERMINAL_PROMPT = "0"
  env.GIT_NO_REPLACE_OBJECTS = "1"
  env.GIT_PAGER = "cat"
  for k, v in pairs(extra or {}) do
    env[k] = v
  end
  return env
end

---@class minime.worktree.GitResult
---@field code integer 0 on success; 124 when killed at the timeout; -1 when git could not start
---@field stdout string
---@field stderr string

--- Run `git <M.FLAGS> <args>` in `opts.cwd` off the main loop: done(result) on the main loop,
--- once.
---@param args string[]
---@param opts {cwd: string, env?: table<string, string>, timeout?: integer}
---@param done fun(result: minime.worktree.GitResult)
function M.run(args, opts, done)
  local cmd = { "git" }
  vim.list_extend(cmd, M.FLAGS)
  vim.list_extend(cmd, args)
  local finished, timer = false, nil
  local function finish(result)
    if finished then
      return
    end
    finished = true
    if timer and not timer:is_closing() then
      timer:close()
    end
    vim.schedule(function()
      done(result)
    end)
  end
  local ok, obj = pcall(vim.system, cmd, {
    cwd = opts.cwd,
    env = environment(opts.env),
    clear_env = true,
    text = true,
  }, function(r)
    finish({ code = r.code, stdout = r.stdout or "", stderr = r.stderr or "" })
  end)
  if not ok then
    return finish({ code = -1, stdout = "", stderr = tostring(obj) })
  end
  local limit = opts.timeout or M.TIMEOUT_MS
  timer = uv.new_timer()
  timer:start(limit, 0, function()
    if not finished then
      pcall(obj.kill, obj, "sigkill")
      finish({
        code = 124,
        stdout = "",
        stderr = ("git %s did not answer within %g s"):format(args[1], limit / 1000),
      })
    end
  end)
end

-- The plugin's git directories, one per object format, in Neovim's temporary directory.
local private = {}

local function write_file(path, text)
  local fd = uv.fs_open(path, "w", 384)
  if fd then
    uv.fs_write(fd, text, 0)
    uv.fs_close(fd)
  end
end

--- The plugin's git directory for object format `format` (made once, mode 0700): HEAD,
--- refs/, a config stating the format and nothing else.
---@param format string
---@return string
function M.private(format)
  if private[format] then
    return private[format]
  end
  local dir = ("%s/minime-worktree-git-%s"):format(vim.fs.dirname(vim.fn.tempname()), format)
  uv.fs_mkdir(dir, 448)
  uv.fs_mkdir(dir .. "/refs", 448)
  write_file(dir .. "/HEAD", "ref: refs/heads/minime\n")
  write_file(
    dir .. "/config",
    format == "sha1" and "[core]\n\trepositoryformatversion = 0\n"
      or ("[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = %s\n"):format(
        format
      )
  )
  private[format] = dir
  return dir
end

---@class minime.worktree.Repo
---@field root string the work tree (here: the worktree's directory)
---@field common_dir string the repository's common git directory (its objects)
---@field dir string the plugin's git directory (M.private)
---@field index string the index used

--- Run `git <args>` on `repo`: the plugin's git directory, the work tree `repo.root`, the
--- repository's objects, `repo.index` as the index.
---@param repo minime.worktree.Repo
---@param args string[]
---@param opts {cwd: string, timeout?: integer}
---@param done fun(result: minime.worktree.GitResult)
function M.run_in(repo, args, opts, done)
  local env = {
    GIT_DIR = repo.dir,
    GIT_WORK_TREE = repo.root,
    GIT_OBJECT_DIRECTORY = repo.common_dir .. "/objects",
    GIT_INDEX_FILE = repo.index,
  }
  M.run(args, { cwd = opts.cwd, timeout = opts.timeout, env = env }, done)
end

return M
