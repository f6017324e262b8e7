--- Which file names are secret: glob patterns (DEFAULT_DENY, or the user's `deny` option)
--- matched case-insensitively against a name. Scope asks it about the basename, the relative
--- and the real absolute path of every buffer, so matching is compiled once per list and
--- remembered per name.
---
---   local list = deny.compile(patterns)   -- cached per list
---   deny.denies(list, name)               -- true when a pattern matches `name`
---   deny.any(patterns, names)             -- true when one of `names` is denied
---   deny.file(patterns, path, cwd)        -- the one rule for a file's text leaving the editor
local M = {}

--- Glob patterns of files never shown, matched (case-insensitively) against the basename, the
--- path relative to the working directory and the real absolute path (so `**/.ssh/**` also
--- holds when the cwd is inside ~/.ssh). A lone `*` also matches nothing (`id_rsa*` denies
--- `id_rsa`). `ctx.deny` replaces this list; to extend it, a user config can pass
--- `vim.list_extend(vim.deepcopy(DEFAULT_DENY), { ... })`.
M.DEFAULT_DENY = {
  ".env",
  ".env.*",
  "*.env",
  ".envrc",
  "*.pem",
  "*.key",
  "*.p12",
  "*.pfx",
  "*.jks",
  "*.keystore",
  "*.kdbx",
  "*.ppk",
  "*.asc",
  "secring.*",
  "id_rsa*",
  "id_dsa*",
  "id_ecdsa*",
  "id_ed25519*",
  ".netrc",
  ".pgpass",
  ".npmrc",
  ".pypirc",
  ".git-credentials",
  ".htpasswd",
  ".vault-token",
  "credentials",
  "credentials.json",
  "secrets.y*ml",
  "*.secret",
  "*.tfvars",
  "*.tfstate",
  -- Cloud, cluster, VPN and package-registry credentials.
  ".boto",
  ".s3cfg",
  ".terraformrc",
  "kubeconfig",
  "*.ovpn",
  "rclone.conf",
  "application_default_credentials.json",
  "service-account*.json",
  ".authinfo",
  ".authinfo.*",
  ".yarnrc.yml",
  ".my.cnf",
  "auth.json",
  "**/.azure/accessTokens.json",
  "**/.azure/msal_token_cache.*",
  "**/.cargo/credentials.toml",
  "**/.m2/settings.xml",
  "**/.gradle/gradle.properties",
  -- Shell and REPL histories (commands typed with tokens in them).
  ".*history",
  ".histfile",
  -- Remote URLs with tokens in them.
  "**/.git/config",
  -- Whole directories of credentials, when the cwd is (or contains, or is inside) a home.
  "**/.ssh/**",
  "**/.gnupg/**",
  "**/.aws/**",
  "**/.docker/config.json",
  "**/.kube/config",
  "**/.config/gh/hosts.y*ml",
}

-- deny list (joined) -> { lpeg = one pattern matching any of them | nil, literal = set,
-- memo = name -> denied }. Matching is a pure function of the list and the name, so results
-- are remembered: open_buffers asks the same few thousand names on every call (an lpeg match
-- of the default list costs ~2.5 us, a lookup ~0.02 us).
local compiled = {}
local MEMO_MAX = 20000

-- vim.glob's `*` needs at least one character (Neovim 0.11): "id_rsa*" misses "id_rsa". Each
-- lone `*` outside brackets is therefore also tried as nothing (2^n variants, n capped at 4).
local function variants(pattern)
  local stars, depth = {}, 0
  for i = 1, #pattern do
    local ch = pattern:sub(i, i)
    if ch == "[" then
      depth = depth + 1
    elseif ch == "]" and depth > 0 then
      depth = depth - 1
    elseif
      ch == "*"
      and depth == 0
      and pattern:sub(i - 1, i - 1) ~= "*"
      and pattern:sub(i + 1, i + 1) ~= "*"
    then
      stars[#stars + 1] = i
    end
  end
  local out = { pattern }
  if #stars > 4 then
    return out
  end
  for mask = 1, 2 ^ #stars - 1 do
    local pieces, from = {}, 1
    for k, at in ipairs(stars) do
      if math.floor(mask / 2 ^ (k - 1)) % 2 == 1 then
        pieces[#pieces + 1] = pattern:sub(from, at - 1)
        from = at + 1
      end
    end
    pieces[#pieces + 1] = pattern:sub(from)
    out[#out + 1] = table.concat(pieces)
  end
  return out
end

--- The compiled form of a deny list (built once per distinct list).
---@param patterns string[]
---@return table list
function M.compile(patterns)
  local key = table.concat(patterns, "\0")
  local c = compiled[key]
  if c then
    return c
  end
  -- files: root -> { name -> verdict } kept by scope.lua across calls (Scope:file).
  c = { literal = {}, memo = {}, memo_n = 0, files = {} }
  for _, pattern in ipairs(patterns) do
    if type(pattern) == "string" and pattern ~= "" then
      for _, variant in ipairs(variants(pattern:lower())) do
        local ok, lp = pcall(vim.glob.to_lpeg, variant)
        if ok then
          c.lpeg = c.lpeg and (c.lpeg + lp) or lp
        else
          -- A pattern that does not compile still denies what it spells literally (fail closed).
          c.literal[variant] = true
        end
      end
    end
  end
  compiled[key] = c
  return c
end

local match = vim.lpeg.match

--- Whether a pattern of the compiled list `c` matches `name`.
---@param c table compiled deny list (M.compile)
---@param name string
---@return boolean
function M.denies(c, name)
  local hit = c.memo[name]
  if hit == nil then
    local lower = name:lower()
    hit = (c.literal[lower] or (c.lpeg and match(c.lpeg, lower))) and true or false
    if c.memo_n >= MEMO_MAX then
      c.memo, c.memo_n = {}, 0
    end
    c.memo[name], c.memo_n = hit, c.memo_n + 1
  end
  return hit
end

--- Whether any of `names` is denied by `patterns`.
---@param patterns string[]
---@param names string[]
---@return boolean
function M.any(patterns, names)
  local c = M.compile(patterns)
  for _, name in ipairs(names) do
    if M.denies(c, name) then
      return true
    end
  end
  return false
end

--- Whether the file `path` is on the deny list: the one rule for every way a file's text leaves
--- the editor besides the tools' scope (a range ask, :MiniMeComment, an `@` mention, a diff
--- compared with the file as it is now). `path` is absolute or relative to `cwd` (a buffer's
--- name, a path as typed); its basename, its path relative to `cwd` and its real absolute path
--- are matched (symlinks resolved: `notes -> .env` is as secret as `.env`), and the name as
--- given. `patterns` nil: the default list.
---@param patterns string[]|nil
---@param path string
---@param cwd string
---@return boolean
function M.file(patterns, path, cwd)
  if type(patterns) ~= "table" then
    patterns = M.DEFAULT_DENY
  end
  local abs = vim.fs.normalize(path:sub(1, 1) == "/" and path or (cwd .. "/" .. path))
  local real = vim.uv.fs_realpath(abs) or abs
  local names = { path, vim.fs.basename(abs), abs, vim.fs.basename(real), real }
  for _, root in ipairs({ vim.uv.fs_realpath(cwd) or cwd, cwd }) do
    for _, name in ipairs({ real, abs }) do
      if name:sub(1, #root + 1) == root .. "/" then
        names[#names + 1] = name:sub(#root + 2)
      end
    end
  end
  return M.any(patterns, names)
end

return M
