--- An image pasted from the system clipboard into the input float (<M-v>): read with
--- `wl-paste` (Wayland) or `xclip` (X11) off the main loop (vim.system), kept in a temporary
--- file under Neovim's state dir (stdpath("state")/minime/pasted, never the cwd), and named in
--- the prompt by a token, `@clipboard-N.png`, that minime.editor.mentions attaches as it does
--- `@shot.png`: an ACP image block where the agent's promptCapabilities.image is true, else
--- the user is told. Only files pasted here are ever attached this way; they are deleted when
--- Neovim quits.
---
---   pasted_image.paste(function(token) ... end)  -- token = "@clipboard-1.png", or nil (said)
---   pasted_image.file("clipboard-1.png")          -- {path, mime_type} of a pasted one, or nil
local M = {}

-- The extensions a pasted image is kept with, preferred first; their types are the mentions'
-- (minime.editor.mentions.IMAGE_TYPES: what an `image` block may carry).
local PREFERRED = { "png", "jpg", "gif", "webp" }
local TIMEOUT_MS = 5000

---@type table<string, {path: string, mime_type: string}> token's path ("clipboard-1.png") -> file
local pasted = {}
local count = 0

local function say(message, level)
  require("minime.ui.say").say("minime: " .. message, level or vim.log.levels.WARN)
end

--- The clipboard tool of this session: how to list the clipboard's types and read one.
---@return {name: string, list: string[], read: fun(mime: string): string[]}?
function M.tool()
  if (vim.env.WAYLAND_DISPLAY or "") ~= "" and vim.fn.executable("wl-paste") == 1 then
    return {
      name = "wl-paste",
      list = { "wl-paste", "--list-types" },
      read = function(mime)
        return { "wl-paste", "--no-newline", "--type", mime }
      end,
    }
  end
  if (vim.env.DISPLAY or "") ~= "" and vim.fn.executable("xclip") == 1 then
    return {
      name = "xclip",
      list = { "xclip", "-selection", "clipboard", "-t", "TARGETS", "-o" },
      read = function(mime)
        return { "xclip", "-selection", "clipboard", "-t", mime, "-o" }
      end,
    }
  end
  return nil
end

--- Where pasted images are kept (made, private, on first use).
---@return string
function M.dir()
  local dir = vim.fn.stdpath("state") .. "/minime/pasted"
  vim.fn.mkdir(dir, "p", tonumber("700", 8))
  return dir
end

--- Run `argv` off the main loop; `done(stdout)` on it, or nil after saying why.
local function run(tool, argv, done)
  local ok, err = pcall(vim.system, argv, { text = false, timeout = TIMEOUT_MS }, function(r)
    vim.schedule(function()
      if r.code ~= 0 then
        local why = vim.trim(r.stderr or ""):match("[^\n]*$") or ""
        say(("%s failed (exit %d%s)"):format(tool.name, r.code, why ~= "" and (": " .. why) or ""))
        return done(nil)
      end
      done(r.stdout or "")
    end)
  end)
  if not ok then
    say(("cannot run %s: %s"):format(tool.name, tostring(err)))
    done(nil)
  end
end

--- Keep `data` as pasted image N: its token, or nil (said).
local function keep(data, kind)
  count = count + 1
  local name = ("clipboard-%d.%s"):format(count, kind.ext)
  local path = ("%s/%d-%s"):format(M.dir(), vim.fn.getpid(), name)
  local file, err = io.open(path, "wb")
  if not file then
    say("cannot keep the pasted image: " .. tostring(err))
    return nil
  end
  file:write(data)
  file:close()
  pasted[name] = { path = path, mime_type = kind.mime }
  return "@" .. name
end

--- Read the clipboard's image; `done(token)` on the main loop with its `@clipboard-N.ext`, or
--- nil when there is none (the user is told why: no tool, no image, the tool failed).
---@param done fun(token: string?)
function M.paste(done)
  local tool = M.tool()
  if not tool then
    say("no clipboard tool for images: install wl-clipboard (Wayland) or xclip (X11)")
    return done(nil)
  end
  run(tool, tool.list, function(listed)
    if not listed then
      return done(nil)
    end
    local offered = {}
    for line in listed:gmatch("[^\r\n]+") do
      offered[vim.trim(line)] = true
    end
    local kind
    local types = require("minime.editor.mentions").IMAGE_TYPES
    for _, ext in ipairs(PREFERRED) do
      if offered[types[ext]] then
        kind = { mime = types[ext], ext = ext }
        break
      end
    end
    if not kind then
      say("the clipboard holds no image (png, jpeg, gif or webp)", vim.log.levels.INFO)
      return done(nil)
    end
    run(tool, tool.read(kind.mime), function(data)
      if data and data == "" then
        say("the clipboard's image is empty", vim.log.levels.INFO)
        data = nil
      end
      done(data and keep(data, kind) or nil)
    end)
  end)
end

--- The pasted image a mention's path names ("clipboard-1.png"), or nil.
---@param name string
---@return {path: string, mime_type: string}?
function M.file(name)
  return pasted[name]
end

-- Temporary: gone with this Neovim.
vim.api.nvim_create_autocmd("VimLeavePre", {
  group = vim.api.nvim_create_augroup("minime.pasted_image", { clear = true }),
  callback = function()
    for _, f in pairs(pasted) do
      os.remove(f.path)
    end
  end,
})

return M
