-- Neovim 0.11+: without setup(), lsp/promptforge.lua serves
-- vim.lsp.enable('promptforge'): prompts and test files attach, other Markdown
-- does not, and the run handlers come with the configuration.
local H = require('helpers')

if vim.fn.has('nvim-0.11') == 0 then
  io.stdout:write('enable: skipped (Neovim ' .. tostring(vim.version()) .. ' has no vim.lsp.enable)\n')
  vim.cmd('qall!')
  return
end

local dir = H.scratch({
  ['p.md'] = H.prompt("return 'enabled'"),
  ['notes.md'] = '# Notes\n\nNo frontmatter here.\n',
  ['p.test.yaml'] = 'cases:\n  - name: one\n    expect:\n      result: "enabled"\n',
})

H.run('enable', {
  { 'lsp/promptforge.lua is the config vim.lsp.config finds', function()
    local cfg = vim.lsp.config.promptforge
    -- The binary is looked up when the server starts (config.locate).
    H.eq('function', type(cfg.cmd), 'default cmd')
    H.eq({ 'promptforge.toml', '.git' }, cfg.root_markers, 'root markers')
    assert(type(cfg.root_dir) == 'function' and cfg.handlers['promptforge/ask'], vim.inspect(cfg))
  end },

  { "vim.lsp.enable('promptforge') attaches prompts and tests, not other Markdown", function()
    -- The default cmd, with the server found on PATH.
    local bin_dir = vim.fn.tempname()
    vim.fn.mkdir(bin_dir, 'p')
    vim.uv.fs_symlink(H.bin, bin_dir .. '/promptforge')
    vim.env.PATH = bin_dir .. ':' .. vim.env.PATH
    local found = require('promptforge.config').locate()
    H.eq({ bin_dir .. '/promptforge', 'PATH' }, { found.path, found.source }, 'the binary found')
    vim.lsp.enable('promptforge')
    local buf, client = H.open(dir .. '/p.md')
    H.eq(vim.fs.normalize(dir), vim.fs.normalize(client.root_dir), 'root')
    H.eq({ trusted = true }, client.config.init_options, 'the trust of the (allowed) promptforge.toml')
    local _, same = H.open(dir .. '/p.test.yaml')
    H.eq(client.id, same.id, 'one server per root')
    vim.cmd.edit(dir .. '/notes.md')
    H.eq(0, #vim.lsp.get_clients({ bufnr = 0 }), 'clients of notes.md')
    -- The commands and the runEvent handler work with this configuration too.
    vim.api.nvim_set_current_buf(buf)
    vim.cmd('PromptForgeRun')
    H.wait_output(buf, 'Result:\nenabled')
  end },

  { "vim.lsp.config('promptforge', { cmd = ... }) is an explicit setting: used as it is", function()
    vim.lsp.config('promptforge', { cmd = { '/nonexistent/promptforge', 'lsp' } })
    local found = require('promptforge.config').locate()
    H.eq({ '/nonexistent/promptforge', 'lsp' }, found.cmd, 'cmd')
    H.eq({ nil, 'setting' }, { found.path, found.source }, 'not looked up elsewhere')
    assert(found.why:find("vim.lsp.config('promptforge'", 1, true), found.why)
  end },
})
