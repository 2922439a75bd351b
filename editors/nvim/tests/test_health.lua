-- :checkhealth promptforge with the server attached and the parser installed
-- (test_parser.lua runs before this and builds it).
local H = require('helpers')

H.setup()

H.run('health', {
  { ':checkhealth promptforge reports the binary, its version, the server and the parser, no error', function()
    H.open(H.repo .. '/examples/word-stats.md')
    vim.cmd('checkhealth promptforge')
    local text = H.wait('the health report', function()
      local t = H.text(0)
      return t:find('parser promptforge', 1, true) and t
    end)
    assert(not text:find('ERROR', 1, true), text)
    assert(text:find('OK server binary ' .. vim.pesc(H.bin) .. ' %(set explicitly: setup%({ cmd = %.%.%. }%)%): promptforge %d'),
      text)
    assert(text:find('OK server %d+ attached to 1 buffer%(s%)'), text)
    assert(text:find('OK tree-sitter parser promptforge installed', 1, true), text)
  end },
})
