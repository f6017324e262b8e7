--- How the plugin runs git: the one place, so that no caller can forget what follows.
---
--- A repository's own settings are the agent's to write (it edits files in the cwd, `.git/`
--- included, with its own tools or a shell), and several make git run a program: core.fsmonitor,
--- clean/smudge/process filters named by .gitattributes, textconv and external diff drivers,
--- hooks (post-index-change runs on any index write), a promisor remote's lazy fetch (and its
--- ssh command or `ext::` URL), a submodule's own config when git looks into it. Rather than
--- list them and hope the list is complete, git never reads the repository's config:
---   * Every command but the discovery runs with GIT_DIR set to the plugin's own directory for
---     that repository (M.repo: a config that states the object format and nothing else, no
---     hooks, an index of its own), on the user's work tree (GIT_WORK_TREE) and object store
---     (GIT_OBJECT_DIRECTORY). `.gitattributes` may still name a driver: no config defines one,
---     so nothing runs. No system or global config either (GIT_CONFIG_NOSYSTEM,
---     GIT_CONFIG_GLOBAL=/dev/null, GIT_ATTR_NOSYSTEM), no transport at all
---     (GIT_ALLOW_PROTOCOL=""), and no GIT_* variable of Neovim's environment.
---   * The discovery (`git rev-parse`) reads the repository's config to find it, and nothing
---     else: no index, no work tree file, no object, so none of the above can start. So do the
---     rewind's refs (review/checkpoints.lua: `update-ref`, `for-each-ref` on refs/minime/,
---     GIT_DIR the user's, no reflog; a hook, the one thing they could run, is off by M.FLAGS).
---   * `-c` flags (M.FLAGS) turn off what executes for the discovery too, and for any git a git
---     might start (they pass on through GIT_CONFIG_PARAMETERS), as a second line of defence.
---   * Every command is bounded (M.TIMEOUT_MS, then killed: a FIFO put where git reads a
---     .gitignore would hold it forever) and runs off the main loop (vim.system's callback,
---     answered on the main loop).
---   * The commands chosen never look into a submodule: `git add -A` runs `git status` inside
---     each one, under that submodule's own config; ls-files and update-index compare only its
---     HEAD (review/git.lua).
---
---   git.with_repo(cwd, work, done)  -- work(repo) in a coroutine, alone on that repository
---   git.call(repo, args, opts)      -- inside work: a command on it, its result
---   git.run_in(repo, args, opts, done)  -- the same with a callback, anywhere
---   git.run(args, opts, done)       -- any git command: done({code, stdout, stderr})
local async = require("minime.editor.async")

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

--- Neovim's environment without GIT_* (GIT_DIR, GIT_EXTERNAL_DIFF, GIT_CONFIG_PARAMETERS…),
--- with what keeps every configuration but the plugin's out; `extra` on top.
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
  env.GIT_ALLOW_PROTOCOL = "" -- set and empty: every transport refused, whatever a config says
  env.GIT_TERMINAL_PROMPT = "0"
  env.GIT_NO_REPLACE_OBJECTS = "1"
  env.GIT_PAGER = "cat"
  for k, v in pairs(extra or {}) do
    env[k] = v
  end
  return env
end

---@class minime.git.Result
---@field code integer 0 on success; 124 when killed at the timeout; -1 when git could not start
---@field stdout string
---@field stderr string

---@class minime.git.Opts
---@field cwd string
---@field env? table<string, string>
---@field index? string the index file (run_in; default: the plugin's)
---@field stdin? string
---@field text? boolean false: the output as git wrote it (-z lists)
---@field timeout? integer ms (default M.TIMEOUT_MS)
---@field fast? boolean done() in libuv's callback (a fast context), not scheduled

--- Run `git <M.FLAGS> <args>` off the main loop: done(result) on the main loop (in libuv's
--- callback with `opts.fast`: it may then only use what a fast context allows), once.
---@param args string[]
---@param opts minime.git.Opts
---@param done fun(result: minime.git.Result)
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
    if opts.fast then
      return done(result)
    end
    vim.schedule(function()
      done(result)
    end)
  end
  local ok, obj = pcall(vim.system, cmd, {
    cwd = opts.cwd,
    env = environment(opts.env),
    clear_env = true,
    stdin = opts.stdin,
    text = opts.text ~= false,
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

---@class minime.git.Repo
---@field root string the work tree's top directory
---@field git_dir string the user's git directory (per worktree)
---@field common_dir string the user's common git directory (objects, info/exclude)
---@field format string the object format ("sha1", "sha256")
---@field dir string the plugin's own git directory for it (config, index)
---@field index string the plugin's index (review/git.lua keeps it)
---@field seeded? boolean the plugin's index was started from the user's
---@field tree? string the tree of the plugin's index as last written
---@field busy? boolean
---@field queue function[]

-- The user's git directory -> the repository's record; a cwd -> its repository, with the
-- git directory's inode then (a repository made again there is found again).
---@type table<string, minime.git.Repo>
local repos = {}
---@type table<string, { repo: minime.git.Repo, ino: integer }>
local known = {}

-- The plugin's directories live in Neovim's own temporary directory (gone when it exits).
local base_dir = vim.fs.dirname(vim.fn.tempname()) .. "/minime-git"
local made = 0

local function write_file(path, text)
  local fd = uv.fs_open(path, "w", 384)
  if fd then
    uv.fs_write(fd, text, 0)
    uv.fs_close(fd)
  end
end

--- A new directory of the plugin's for a repository of object format `format`, mode 0700:
--- HEAD, refs/, info/, a config that states the format and nothing else. (libuv only: this
--- may run in a fast context.)
local function private_dir(format)
  made = made + 1
  uv.fs_mkdir(base_dir, 448)
  local dir = ("%s/%d"):format(base_dir, made)
  uv.fs_mkdir(dir, 448)
  uv.fs_mkdir(dir .. "/refs", 448)
  uv.fs_mkdir(dir .. "/info", 448)
  write_file(dir .. "/HEAD", "ref: refs/heads/minime\n")
  write_file(
    dir .. "/config",
    format == "sha1" and "[core]\n\trepositoryformatversion = 0\n"
      or ("[core]\n\trepositoryformatversion = 1\n[extensions]\n\tobjectformat = %s\n"):format(
        format
      )
  )
  return dir
end

local shared = {}
--- A git directory of the plugin's for format `format`, no repository's (worktree/init.lua).
---@param format string
---@return string
function M.private(format)
  shared[format] = shared[format] or private_dir(format)
  return shared[format]
end

--- The repository whose work tree holds `cwd`: done(repo), or done(nil, why) — why is nil
--- when `cwd` is simply not in a work tree (or git is missing), a message when git failed.
--- Found once per cwd (`git rev-parse`), then remembered while its git directory stays.
---@param cwd string
---@param done fun(repo?: minime.git.Repo, why?: string)
---@param fast? boolean done() may come in a fast context (see M.run)
function M.repo(cwd, done, fast)
  local seen = known[cwd]
  local st = seen and uv.fs_stat(seen.repo.git_dir)
  if st and st.ino == seen.ino then
    return done(seen.repo)
  end
  local args = { "rev-parse", "--path-format=absolute", "--show-toplevel", "--git-dir" }
  vim.list_extend(args, { "--git-common-dir", "--show-object-format" })
  M.run(args, { cwd = cwd, fast = fast }, function(r)
    local root, git_dir, common, format = r.stdout:match("^(.-)\n(.-)\n(.-)\n(%w+)\n?$")
    if r.code ~= 0 or not format then
      return done(nil, r.code == 124 and vim.trim(r.stderr) or nil) -- no git: as outside one
    end
    local repo = repos[git_dir]
    if not repo or repo.format ~= format or repo.common_dir ~= common then
      local dir = private_dir(format)
      repo = { git_dir = git_dir, common_dir = common, format = format, dir = dir, queue = {} }
      repo.index = dir .. "/index"
      repos[git_dir] = repo
    end
    repo.root = root
    local now = uv.fs_stat(git_dir)
    known[cwd] = now and { repo = repo, ino = now.ino } or nil
    done(repo)
  end)
end

--- Run `git <args>` on `repo` as the header says: the plugin's git directory, the user's work
--- tree and objects, `opts.index` (default: the plugin's) as the index.
---@param repo minime.git.Repo
---@param args string[]
---@param opts minime.git.Opts
---@param done fun(result: minime.git.Result)
function M.run_in(repo, args, opts, done)
  local env = {
    GIT_DIR = repo.dir,
    GIT_WORK_TREE = repo.root,
    GIT_OBJECT_DIRECTORY = repo.common_dir .. "/objects",
    GIT_INDEX_FILE = opts.index or repo.index,
  }
  M.run(args, vim.tbl_extend("force", opts, { env = env }), done)
end

--- fn(release) runs when no other work on `repo` does (its index and files are written one
--- at a time); release() lets the next go.
---@param repo minime.git.Repo
---@param fn fun(release: fun())
function M.exclusive(repo, fn)
  table.insert(repo.queue, fn)
  if repo.busy then
    return
  end
  local function next_one()
    local job = table.remove(repo.queue, 1)
    if not job then
      repo.busy = false
      return
    end
    repo.busy = true
    local released = false
    local ok, err = pcall(job, function()
      if not released then
        released = true
        vim.schedule(next_one)
      end
    end)
    if not ok and not released then
      released = true
      vim.schedule(next_one)
      error(err, 0)
    end
  end
  next_one()
end

local c = uv.constants

local copies = 0

--- Copy the regular file `src` to `dst` (ours), its mtime set `mtime_back` seconds earlier
--- than the source's: done(true), done(false) when `src` is missing, done(nil, why) when it
--- is no regular file or the copy failed — in libuv's callback (a fast context). Opened
--- O_NONBLOCK and checked on the open file: a FIFO put in its place never blocks (not even a
--- libuv thread); copied by the kernel into a new file renamed over `dst` (a reader sees the
--- old or the new, never half).
---@param src string
---@param dst string
---@param mtime_back integer
---@param done fun(copied: boolean?, why?: string)
function M.copy_regular(src, dst, mtime_back, done)
  copies = copies + 1
  local tmp = ("%s.%d.tmp"):format(dst, copies)
  uv.fs_open(src, bit.bor(c.O_RDONLY, c.O_NONBLOCK), 0, function(oerr, fd)
    if not fd then
      return done((oerr or ""):match("^ENOENT") and false or nil, oerr)
    end
    local function fail(why)
      uv.fs_close(fd)
      uv.fs_unlink(tmp)
      done(nil, why)
    end
    uv.fs_fstat(fd, function(serr, st)
      if not st or st.type ~= "file" then
        return fail(serr or (src .. " is not a regular file"))
      end
      uv.fs_open(tmp, "wx", 384, function(werr, out)
        if not out then
          return fail(werr)
        end
        local function copy(offset)
          if offset >= st.size then
            local mtime = math.max(st.mtime.sec - mtime_back, 1)
            return uv.fs_futime(out, mtime, mtime, function()
              uv.fs_close(out)
              uv.fs_close(fd)
              local ok, rerr = uv.fs_rename(tmp, dst)
              if not ok then
                uv.fs_unlink(tmp)
              end
              done(ok and true or nil, rerr)
            end)
          end
          uv.fs_sendfile(out, fd, offset, st.size - offset, function(cerr, n)
            if not n or n == 0 then
              uv.fs_close(out)
              return fail(cerr or "short copy")
            end
            copy(offset + n)
          end)
        end
        copy(0)
      end)
    end)
  end)
end

--- The repository's info/exclude as the plugin's (ls-files --exclude-standard reads the one
--- in GIT_DIR); none when it is missing or no regular file. done() in a fast context.
---@param repo minime.git.Repo
---@param done fun()
function M.copy_excludes(repo, done)
  local ours = repo.dir .. "/info/exclude"
  M.copy_regular(repo.common_dir .. "/info/exclude", ours, 0, function(copied)
    if not copied then
      uv.fs_unlink(ours)
    end
    done()
  end)
end

--- Inside `work` (M.with_repo): `git <args>` on `repo` (M.run_in), its result.
---@param repo minime.git.Repo
---@param args string[]
---@param opts minime.git.Opts
---@return minime.git.Result
function M.call(repo, args, opts)
  return async.wait(function(done)
    M.run_in(repo, args, opts, done)
  end)
end

--- `work(repo)` for the repository of `cwd`, in a coroutine (it may M.call and async.wait),
--- alone on that repository, its info/exclude copied first: done(value, err) with what work
--- returned (or the error it threw, as err); outside a work tree done(nil, why) — why nil when
--- `cwd` is in none, a message when git failed.
---@param cwd string
---@param work fun(repo: minime.git.Repo): any, string?
---@param done fun(value: any, err?: string)
function M.with_repo(cwd, work, done)
  M.repo(cwd, function(repo, why)
    if not repo then
      return done(nil, why)
    end
    M.exclusive(repo, function(release)
      async.run(function()
        async.wait(function(copied)
          M.copy_excludes(repo, copied)
        end)
        return { work(repo) }
      end, function(ok, value)
        release()
        if not ok then
          return done(nil, type(value) == "table" and value.message or tostring(value))
        end
        done(value[1], value[2])
      end)
    end)
  end)
end

return M
