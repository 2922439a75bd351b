;;; test.el --- The Eglot snippet against the real server, in emacs --batch  -*- lexical-binding: t -*-

;; Run by ci.sh: emacs --batch -l test.el. It loads promptforge-eglot.el (the
;; text ../README.md shows), opens a prompt with an error and waits for its
;; Flymake diagnostic at the right line and column, fixes it and waits for the
;; diagnostics to clear, then `eglot-shutdown' must end the server with exit
;; status 0. Then trust: the snippet sends no `trusted', so the server
;; refuses a run that would start a Plugin of a promptforge.toml nobody
;; trusted; the entry the snippet's comment shows, with
;; `:initializationOptions (:trusted t)', sends it and the run starts the
;; Plugin's program. Every wait is bounded; the exit status is 1 on any failure.
;; In --batch Emacs never goes idle or runs commands, so the test runs Eglot's
;; idle timers (its delayed didChange) and post-command-hook (eglot-ensure) itself.

(require 'cl-lib)
(require 'subr-x)
(require 'eglot)
(require 'flymake)

(defvar pf-here (file-name-directory (or load-file-name buffer-file-name)))
(defvar pf-passed 0)
(defvar pf-failed 0)

(defun pf-flush ()
  "Run what an interactive Emacs would have run by now: the idle timers
(Eglot's delayed didChange is one). One-shot timers run once."
  (dolist (timer (copy-sequence timer-idle-list))
    (unless (timer--repeat-delay timer)
      (cancel-timer timer))
    (apply (timer--function timer) (timer--args timer))))

(defun pf-wait (what pred &optional seconds)
  "Wait until PRED returns non-nil (at most SECONDS, default 20), or fail with WHAT."
  (let ((deadline (+ (float-time) (or seconds 20))) value)
    (while (and (not (setq value (funcall pred))) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (pf-flush))
    (or value
        (let ((server (ignore-errors (eglot-current-server))))
          ;; The end of Eglot's log of messages tells what did come.
          (when server
            (with-current-buffer (jsonrpc-events-buffer server)
              (princ (format "--- Eglot events (tail):\n%s\n---\n"
                             (buffer-substring (max (point-min) (- (point-max) 1500)) (point-max))))))
          (error "Timed out waiting for %s" what)))))

(defun pf-check (name fn)
  (let ((started (float-time)))
    (condition-case err
        (progn (funcall fn)
               (setq pf-passed (1+ pf-passed))
               (princ (format "ok     emacs: %s (%d ms)\n" name (* 1000 (- (float-time) started)))))
      (error (setq pf-failed (1+ pf-failed))
             (princ (format "not ok emacs: %s: %s\n" name (error-message-string err)))))))

(defvar pf-published nil "The params of every publishDiagnostics, newest first.")
(advice-add 'eglot-handle-notification :before
            (lambda (_server method &rest params)
              (when (eq method 'textDocument/publishDiagnostics)
                (push params pf-published))))

(defun pf-published-for (version)
  "The publishDiagnostics of this buffer's VERSION, once it came."
  (let ((uri (eglot--path-to-uri buffer-file-name)))
    (cl-find-if (lambda (p) (and (equal (plist-get p :uri) uri)
                                 (equal (plist-get p :version) version)))
                pf-published)))

(defun pf-write (file text)
  (with-temp-file file (insert text)))

(defvar pf-initialization-options nil
  "The `initializationOptions' of every `initialize' Eglot sent, newest first.")
(advice-add 'jsonrpc-async-request :before
            (lambda (_connection method params &rest _)
              (when (eq method :initialize)
                (push (plist-get params :initializationOptions) pf-initialization-options))))

(defun pf-no-options-p (options)
  "Non-nil when OPTIONS, as Eglot sends them, is an empty JSON object."
  (or (null options) (and (hash-table-p options) (zerop (hash-table-count options)))))

;; The snippet, exactly as the README shows it, with the binary on PATH.
(let* ((snippet (expand-file-name "promptforge-eglot.el" pf-here))
       (readme (expand-file-name "../README.md" pf-here))
       (bin (expand-file-name (or (getenv "PROMPTFORGE_BIN") "target/release/promptforge")
                              (expand-file-name "../.." pf-here))))
  (pf-check "editors/README.md shows promptforge-eglot.el verbatim"
            (lambda ()
              (let ((text (with-temp-buffer (insert-file-contents snippet) (buffer-string))))
                (unless (with-temp-buffer (insert-file-contents readme)
                          (search-forward text nil t))
                  (error "README.md does not contain %s: copy it again" snippet)))))
  (setenv "PATH" (concat (file-name-directory bin) path-separator (getenv "PATH")))
  (push (file-name-directory bin) exec-path)
  (load snippet nil t))

;; markdown-mode is a package of its own that Debian's emacs-nox lacks: a
;; stand-in derived from text-mode, which runs markdown-mode-hook as it would.
(unless (fboundp 'markdown-mode)
  (define-derived-mode markdown-mode text-mode "Markdown"))

(let* ((dir (file-name-as-directory (make-temp-file "pf-eglot" t)))
       (prompt (concat dir "p.md"))
       server process)
  (pf-write (concat dir "promptforge.toml") "")
  (pf-write prompt "---\nname: Bad Name\ndescription: d\npromptforge: 0\n---\n\n# T\n\n## Go\n\n```lua\nreturn 'x'\n```\n")
  (pf-write (concat dir "notes.md") "---\ntitle: notes\n---\n\n# Not a prompt\n")

  (pf-check "Markdown without promptforge: starts no server"
            (lambda ()
              (with-current-buffer (find-file-noselect (concat dir "notes.md"))
                (markdown-mode)
                (run-hooks 'post-command-hook)
                (when (eglot-current-server) (error "a server for notes.md")))))

  (pf-check "a prompt's error arrives as a diagnostic at its line and column"
            (lambda ()
              (with-current-buffer (find-file-noselect prompt)
                (markdown-mode)               ; runs promptforge-eglot-maybe-start
                (run-hooks 'post-command-hook) ; eglot-ensure connects after a command
                (setq server (pf-wait "the Eglot server" #'eglot-current-server))
                (setq process (jsonrpc--process server))
                (flymake-start)
                (let* ((diag (pf-wait "a Flymake diagnostic"
                                      (lambda () (car (flymake-diagnostics)))))
                       (beg (flymake-diagnostic-beg diag)))
                  (unless (pf-published-for eglot--versioned-identifier)
                    (error "No diagnostics of version %d" eglot--versioned-identifier))
                  (unless (string-match-p "invalid prompt name `Bad Name`" (flymake-diagnostic-text diag))
                    (error "Unexpected diagnostic %S" (flymake-diagnostic-text diag)))
                  (save-excursion
                    (goto-char beg)
                    (unless (and (= (line-number-at-pos) 2) (= (current-column) 6))
                      (error "Diagnostic at line %d column %d, want 2:6"
                             (line-number-at-pos) (current-column))))))))

  (pf-check "an edit that fixes it clears the diagnostics"
            (lambda ()
              (with-current-buffer (find-file-noselect prompt)
                (goto-char (point-min))
                (forward-line 1)
                (delete-region (point) (line-end-position))
                (insert "name: p")
                (pf-flush) ; Eglot's didChange waits for an idle moment
                ;; The server's answer for this very version (the overlay of
                ;; the old diagnostic went with the deleted text), then Flymake's.
                (let ((params (pf-wait (format "diagnostics of version %d" eglot--versioned-identifier)
                                       (lambda () (pf-published-for eglot--versioned-identifier)))))
                  (unless (zerop (length (plist-get params :diagnostics)))
                    (error "Diagnostics after the fix: %S" (plist-get params :diagnostics))))
                (flymake-start)
                (pf-wait "no Flymake diagnostics" (lambda () (null (flymake-diagnostics)))))))

  (pf-check "eglot-shutdown ends the server with exit status 0"
            (lambda ()
              (unless process (error "no server to shut down"))
              ;; Emacs 28's jsonrpc-shutdown deletes (SIGKILLs) the process right
              ;; after Eglot's `exit'; give the server up to 5 s to exit by
              ;; itself first, so its own exit status is what is checked.
              (let ((patience (lambda (&rest _)
                                (pf-wait "the server to exit after `exit'"
                                         (lambda () (not (process-live-p process))) 5))))
                (advice-add 'jsonrpc-shutdown :before patience)
                (unwind-protect (eglot-shutdown server nil 10) ; errors if `shutdown' fails
                  (advice-remove 'jsonrpc-shutdown patience)))
              (pf-wait "the process to end" (lambda () (not (process-live-p process))) 10)
              (unless (and (eq (process-status process) 'exit) (= (process-exit-status process) 0))
                (error "Server ended with %s %s" (process-status process) (process-exit-status process)))))
  (delete-directory dir t))

;; Trust. A folder whose promptforge.toml declares a Plugin whose program
;; leaves a file, and a prompt that declares the Plugin.
(defun pf-plugin-project ()
  "A new folder with such a promptforge.toml and prompt; its name."
  (let ((dir (file-name-as-directory (make-temp-file "pf-eglot-trust" t))))
    (pf-write (concat dir "promptforge.toml")
              (format "[plugin.\"acme/marker\"]\ncommand = \"sh\"\nargs = [\"-c\", \"touch '%sstarted'\"]\n" dir))
    (pf-write (concat dir "marker.md")
              "---\nname: marker\ndescription: d\npromptforge: 0\nplugins:\n  - acme/marker\n---\n\n# T\n\n## Go\n\n```lua\nreturn 'm'\n```\n")
    dir))

(defun pf-open-prompt (file)
  "Visit FILE as a prompt and return its Eglot server, once connected."
  (with-current-buffer (find-file-noselect file)
    (markdown-mode)
    (run-hooks 'post-command-hook)
    (pf-wait "the Eglot server" #'eglot-current-server)))

(defun pf-run (server file)
  "Ask SERVER to run the prompt FILE: its answer, or the error's message."
  (condition-case err
      (jsonrpc-request server :workspace/executeCommand
                       (list :command "promptforge.run"
                             :arguments (vector (list :uri (eglot--path-to-uri file)))))
    (jsonrpc-error (format "error: %S" (cdr err)))))

(let ((untrusted (pf-plugin-project))
      (trusted (pf-plugin-project))
      servers)
  (pf-check "the snippet sends no trust: a run that would start a Plugin of an untrusted promptforge.toml is refused"
            (lambda ()
              (setq pf-initialization-options nil)
              (let* ((server (pf-open-prompt (concat untrusted "marker.md")))
                     (answer (pf-run server (concat untrusted "marker.md"))))
                (push server servers)
                (unless (pf-no-options-p (car pf-initialization-options))
                  (error "initializationOptions %S" (car pf-initialization-options)))
                (unless (and (stringp answer) (string-match-p "not trusted" answer))
                  (error "the run answered %S" answer))
                (when (file-exists-p (concat untrusted "started"))
                  (error "the Plugin's program was started")))))

  (pf-check "the comment's :initializationOptions (:trusted t): the server is told, the run starts the Plugin"
            (lambda ()
              (let* ((text (with-temp-buffer
                             (insert-file-contents (expand-file-name "promptforge-eglot.el" pf-here))
                             (buffer-string)))
                     (contact (and (string-match "^;;   \\((\"promptforge\" .*)\\)$" text)
                                   (car (read-from-string (match-string 1 text)))))
                     (eglot-server-programs (list (cons '(markdown-mode) contact))))
                (unless (equal contact '("promptforge" "lsp" :initializationOptions (:trusted t)))
                  (error "the comment's entry reads %S" contact))
                (setq pf-initialization-options nil)
                (let ((server (pf-open-prompt (concat trusted "marker.md"))))
                  (push server servers)
                  (unless (equal (car pf-initialization-options) '(:trusted t))
                    (error "initializationOptions %S" (car pf-initialization-options)))
                  (pf-run server (concat trusted "marker.md"))
                  (pf-wait "the Plugin's program to leave its file"
                           (lambda () (file-exists-p (concat trusted "started"))))))))
  (dolist (server servers)
    (ignore-errors (eglot-shutdown server nil 10)))
  (delete-directory untrusted t)
  (delete-directory trusted t))

(princ (format "emacs: %d passed, %d failed\n" pf-passed pf-failed))
(kill-emacs (if (> pf-failed 0) 1 0))
