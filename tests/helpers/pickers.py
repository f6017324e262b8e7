"""vim.ui.select answered by the test (Lua run before setup()): ``_G.pick`` names the items to
choose, one per call (the first whose format_item text contains it); every offer is kept in
``_G.offers`` as ``{prompt, items}``, the items as the user reads them."""

PICK = """
_G.offers, _G.pick = {}, {}
vim.ui.select = function(items, opts, on_choice)
  local shown = vim.tbl_map(opts.format_item or tostring, items)
  table.insert(_G.offers, { prompt = opts.prompt, items = shown })
  local want = table.remove(_G.pick, 1)
  for i, text in ipairs(shown) do
    if want and text:find(want, 1, true) then
      return on_choice(items[i], i)
    end
  end
  on_choice(nil, nil)
end
"""
