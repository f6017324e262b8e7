--- :MiniMeInstall: the plugin's own Python environment, created or updated (what
--- `build = "./scripts/setup --user"` does), off the main loop, saying how it went.
local config = require("minime.config")

local M = {}

--- Create or update the plugin's own Python environment (what `build = "./scripts/setup --user"`
--- does).
---@param on_done? fun(ok: boolean, output: string)
function M.run(on_done)
  local root = config.root()
  local script = root .. "/scripts/setup"
  local venv = root .. "/.venv"
  require("minime.ui.say").say(
    ("minime: installing the Python host into %s …"):format(venv),
    vim.log.levels.INFO
  )
  local ok, err = pcall(vim.system, { script, "--user" }, {
    cwd = root,
    text = true,
    -- The npm package is for the interop tests only.
    env = { MINIME_SKIP_NPM = "1" },
  }, function(res)
    vim.schedule(function()
      local output = vim.trim((res.stdout or "") .. "\n" .. (res.stderr or ""))
      if res.code == 0 then
        local msg = ("minime: installed: %s/bin/python"):format(venv)
        if require("minime.host").chan then
          msg = msg .. " (restart Neovim to use it)"
        end
        require("minime.ui.say").say(msg, vim.log.levels.INFO)
      else
        local last = vim.split(output, "\n")
        require("minime.ui.say").say(
          ("minime: install failed (exit %d): %s — run %s in a shell to see why"):format(
            res.code,
            last[#last] or "",
            script
          ),
          vim.log.levels.ERROR
        )
      end
      if on_done then
        on_done(res.code == 0, output)
      end
    end)
  end)
  if not ok then
    require("minime.ui.say").say(
      ("minime: cannot run %s: %s"):format(script, tostring(err)),
      vim.log.levels.ERROR
    )
  end
end

return M
