-- The init of the headless tests: this plugin alone on 'runtimepath' (ci.sh
-- also points XDG_CONFIG_HOME/XDG_DATA_HOME at scratch folders), no swap files.
local tests = vim.fs.dirname(vim.fs.normalize(debug.getinfo(1, 'S').source:sub(2)))
vim.opt.runtimepath:prepend(vim.fs.dirname(tests))
package.path = tests .. '/?.lua;' .. package.path
vim.o.swapfile = false
vim.o.more = false
vim.o.shortmess = vim.o.shortmess .. 'AI'
