;;; harness.el --- drive real Emacs + eglot against acp-lsp, as a user would  -*- lexical-binding: t -*-
;;
;; The only acp-lsp configuration is the server entry in `eglot-server-programs' (what a user
;; writes; with $HARNESS_INIT_OPTIONS, JSON, as its :initializationOptions), and, with
;; $HARNESS_ELISP (a folder), the optional editors/emacs/acp-lsp.el from there.
;; Everything else here stands in for the user: it opens a file, selects a region, picks a
;; code action and answers questions the way a person at the keyboard would, then records
;; what Emacs shows. Results go to $HARNESS_OUT as JSON.
;;
;; $HARNESS_FLOW picks what the user does: "ask" (the default: a code action, the transcript,
;; the agent's edit, undo), "disk" (an agent changes on disk a file open in Emacs, maybe with
;; an unsaved line; then save and undo), "hunk" (one of an agent's changes rejected by its
;; code action) or "session" (a new session: which agent answers).
;; $HARNESS_SETTINGS_VIA: "initializationOptions", "workspace" (eglot-workspace-configuration)
;; or "dir-locals" (the same in the project's .dir-locals.el) sends the settings only that
;; way (default: the first two, see below).

(require 'cl-lib)
(require 'json)
(require 'eglot)

;; --- the user's configuration ---
(defvar harness-settings
  (let ((json (getenv "HARNESS_INIT_OPTIONS")))
    (and json (json-parse-string json :object-type 'plist :null-object nil
                                 :false-object :json-false)))
  "acp-lsp's settings (the `initializationOptions' object), from $HARNESS_INIT_OPTIONS.")
(add-to-list 'eglot-server-programs
             `(python-mode . (,@(split-string (getenv "ACP_LSP_SERVER"))
                              ,@(and harness-settings
                                     (member (getenv "HARNESS_SETTINGS_VIA")
                                             '(nil "initializationOptions"))
                                     `(:initializationOptions ,harness-settings)))))
;; eglot 1.9 sends `workspace/didChangeConfiguration' with `eglot-workspace-configuration'
;; ({} by default) right after `initialized', and acp-lsp takes that object as its whole
;; settings, dropping the initializationOptions (tests/emacs/test_eglot.py shows it).
;; So the same settings go in the "acp" section too, as a user's .dir-locals.el would put them.
(when harness-settings
  (pcase (getenv "HARNESS_SETTINGS_VIA")
    ("initializationOptions")
    ("dir-locals"                       ; the project's .dir-locals.el, as a user writes it
     (with-temp-file (expand-file-name ".dir-locals.el" (getenv "HARNESS_WORKSPACE"))
       (prin1 `((nil . ((eglot-workspace-configuration . (:acp ,harness-settings)))))
              (current-buffer))))
    (_ (setq-default eglot-workspace-configuration (list :acp harness-settings)))))
(when (getenv "HARNESS_NO_CONFIRM")
  ;; what editors/emacs/README.md suggests: no "[eglot] Server wants to edit" per edit
  (setq eglot-confirm-server-initiated-edits nil))
(when (getenv "HARNESS_ELISP")
  (add-to-list 'load-path (getenv "HARNESS_ELISP"))
  (require 'acp-lsp))

;; --- the stand-in user ---
(defvar harness-questions nil "Every question Emacs asked, newest first.")
(defvar harness-menus nil "The choices of every `completing-read', newest first.")
(defvar harness-pick-action (getenv "HARNESS_ACTION") "The code action to pick (a prefix).")
(defvar harness-no (or (getenv "HARNESS_NO") "Discard your edits")
  "Questions (a regexp) the user answers no; by default \"FILE changed on disk.  Discard
your edits?\" (a person keeps them). Every other yes-or-no question is answered yes.")
(defvar harness-edits nil
  "Every text edit eglot was asked to apply, newest first: (file version have outcome).")

(defun harness-completing-read (prompt collection &rest _)
  "Answer like the user: the code action asked for; for a permission, allow this once."
  (push prompt harness-questions)
  (let* ((choices (if (functionp collection) (all-completions "" collection) collection))
         (titles (mapcar (lambda (c) (if (consp c) (car c) c)) choices)))
    (push (vconcat titles) harness-menus)
    (or (cl-find-if (lambda (c) (string-prefix-p harness-pick-action c)) titles)
        (cl-find-if (lambda (c) (string-match-p "Allow once" c)) titles)
        (cl-find "Yes" titles :test #'equal)  ; Claude's "allow once"
        (car titles))))
(advice-add 'completing-read :override #'harness-completing-read)

(defun harness-yes (prompt)
  "Yes to every question but those matching `harness-no'."
  (push prompt harness-questions)
  (not (string-match-p harness-no prompt)))
(advice-add 'y-or-n-p :override #'harness-yes)
(advice-add 'yes-or-no-p :override #'harness-yes)
(advice-add 'ask-user-about-supersession-threat :override
            (lambda (file)
              (push (format "%s changed on disk; really edit the buffer?" file) harness-questions)
              nil))                     ; "y": go ahead

(advice-add 'eglot--apply-text-edits :around
            (lambda (apply edits &optional version)
              "Record what eglot applied and what it refused (instrumentation only)."
              (let ((entry (list (buffer-file-name) version eglot--versioned-identifier)))
                (condition-case err
                    (prog1 (funcall apply edits version)
                      (push (append entry '("applied")) harness-edits))
                  (error (push (append entry (list (error-message-string err))) harness-edits)
                         (signal (car err) (cdr err)))))))

(defun harness-idle ()
  "Be an idle user: batch Emacs never goes idle, so its idle timers (eglot's didChange,
sent `eglot-send-changes-idle-time' after typing stops) would never run."
  (dolist (timer (copy-sequence timer-idle-list))
    (timer-event-handler timer)))

(defun harness-wait (pred seconds what)
  (let ((deadline (+ (float-time) seconds)))
    (while (and (not (funcall pred)) (< (float-time) deadline))
      (accept-process-output nil 0.05)
      (harness-idle))
    (unless (funcall pred) (error "timed out waiting for %s" what))))

(defun harness-buffer-text (file)
  (let ((buf (get-file-buffer file)))
    (and buf (with-current-buffer buf (buffer-substring-no-properties (point-min) (point-max))))))

(defun harness-file-text (file)
  (with-temp-buffer (insert-file-contents file) (buffer-string)))

(defun harness-transcript-buffer ()
  (let ((transcripts (file-name-as-directory (getenv "HARNESS_TRANSCRIPTS"))))
    (cl-find-if (lambda (b) (and (buffer-file-name b)
                                 (string-prefix-p transcripts (buffer-file-name b))))
                (buffer-list))))

(defun harness-transcript-has (text)
  (let ((tbuf (harness-transcript-buffer)))
    (and tbuf (with-current-buffer tbuf
                (save-excursion (goto-char (point-min))
                                (and (search-forward text nil t)
                                     (search-forward "_status: idle_" nil t)))))))

(defun harness-open (file)
  "Visit FILE in python-mode with eglot connected to acp-lsp."
  (find-file file)
  (python-mode)
  (apply #'eglot (eglot--guess-contact))
  (harness-wait (lambda () (eglot-current-server)) 60 "eglot to connect"))

(defun harness-code-action (from to)
  "Lines FROM to TO (strings to search for) selected, then eglot's code action menu."
  (goto-char (point-min))
  (search-forward from)
  (beginning-of-line)
  (let ((beg (point)))
    (search-forward to)
    (forward-line 1)
    ;; as from the keyboard (eglot shows a mouse menu when the last event was a click)
    (let ((last-nonmenu-event ?\C-m))
      (eglot-code-actions beg (point) nil t))))

(defun harness-events ()
  "The tail of eglot's events buffer (the LSP messages), for the record."
  (let ((b (cl-find-if (lambda (b) (string-match-p "events" (buffer-name b))) (buffer-list))))
    (and b (with-current-buffer b
             (buffer-substring-no-properties (max (point-min) (- (point-max) 60000))
                                             (point-max))))))

(defun harness-questions-since (n)
  "The questions asked after the first N, oldest first."
  (vconcat (nthcdr n (reverse harness-questions))))

;; --- flows ---
(defun harness-run-ask ()
  (let* ((ws (file-name-as-directory (getenv "HARNESS_WORKSPACE")))
         (app (expand-file-name "src/app.py" ws))
         (result nil))
    (harness-open app)
    (let ((original (buffer-string)))
      ;; select the greet function and ask the agent about it through a code action
      (harness-code-action "def greet" "return")
      ;; the answer streams into the transcript buffer
      (harness-wait (lambda () (harness-transcript-has "## Agent")) 60
                    "the turn to end in the transcript")
      (let* ((tbuf (harness-transcript-buffer))
             (edited (with-current-buffer (get-file-buffer app) (buffer-string))))
        (with-current-buffer (get-file-buffer app)
          (undo-boundary)
          (undo)
          (setq result
                `((transcript . ,(with-current-buffer tbuf (buffer-string)))
                  (transcript_file . ,(buffer-file-name tbuf))
                  (original . ,original)
                  (edited . ,edited)
                  (undone . ,(buffer-string))
                  (questions . ,(vconcat (reverse harness-questions))))))))
    result))

(defun harness-run-disk ()
  "The user has src/app.py open (with $HARNESS_USER_LINE unsaved at its end, or
$HARNESS_USER_FROM replaced by $HARNESS_USER_TO, if given) and
asks the agent (a code action on `greet'); the agent changes the file on disk itself. Then
the user saves and undoes. Records the buffer, the disk and every question Emacs asked, step by step."
  (let* ((ws (file-name-as-directory (getenv "HARNESS_WORKSPACE")))
         (app (expand-file-name "src/app.py" ws))
         (user-line (getenv "HARNESS_USER_LINE"))
         (mode (getenv "HARNESS_MODE"))
         (done (getenv "HARNESS_DONE"))
         (result nil))
    (harness-open app)
    (let ((original (buffer-string))
          (server (eglot-current-server))
          asked)
      (when (> (length user-line) 0)
        ;; the unsaved line, typed as its own change
        (goto-char (point-max))
        (insert user-line "\n")
        (undo-boundary)
        (harness-idle))                 ; eglot tells the server (didChange)
      (when (getenv "HARNESS_USER_FROM")
        ;; an unsaved change of the user's own, where the agent will change the file too
        (goto-char (point-min))
        (search-forward (getenv "HARNESS_USER_FROM"))
        (replace-match (getenv "HARNESS_USER_TO") t t)
        (undo-boundary)
        (harness-idle))
      (when mode
        ;; M-: (eglot-execute-command (eglot-current-server) "acp.setMode" ["default"])
        (eglot-execute-command server "acp.newSession" [])
        (eglot-execute-command server "acp.setMode" (vector mode)))
      (setq asked (length harness-questions))
      (harness-code-action "def greet" "return")
      (harness-wait (lambda () (harness-transcript-has done)) 240
                    "the turn to end in the transcript")
      (let ((turn-questions (harness-questions-since asked)))
        (with-current-buffer (get-file-buffer app)
          (let ((edited (buffer-string))
                (modified (buffer-modified-p))
                (in-sync (verify-visited-file-modtime (current-buffer)))
                (disk (harness-file-text app)))
            (setq asked (length harness-questions))
            (save-buffer)
            (let ((save-questions (harness-questions-since asked))
                  (saved (harness-file-text app))
                  (saved-modified (buffer-modified-p)))
              (undo-boundary)
              (setq result
                    `((undo_error . ,(condition-case err (progn (undo) nil)
                                       (error (error-message-string err))))
                      (original . ,original)
                      (edited . ,edited)
                      (modified . ,(if modified t :json-false))
                      (in_sync . ,(if in-sync t :json-false))
                      (disk . ,disk)
                      (turn_questions . ,turn-questions)
                      (save_questions . ,save-questions)
                      (saved . ,saved)
                      (saved_modified . ,(if saved-modified t :json-false))
                      (undone . ,(buffer-string))
                      (edits . ,(vconcat (mapcar #'vconcat (reverse harness-edits))))
                      (transcript . ,(with-current-buffer (harness-transcript-buffer)
                                       (buffer-string)))
                      (questions . ,(vconcat (reverse harness-questions)))
                      (events . ,(harness-events)))))))))
    result))

(defun harness-run-hunk ()
  "The user asks the agent (a code action on `greet'); it changes src/app.py on disk in
several places. At the line $HARNESS_AT the user opens eglot's code actions again and picks
$HARNESS_HUNK_ACTION (\"Reject this change\"). Records the buffer and the disk before and
after, and the titles the second menu offered."
  (let* ((ws (file-name-as-directory (getenv "HARNESS_WORKSPACE")))
         (app (expand-file-name "src/app.py" ws))
         (at (getenv "HARNESS_AT")))
    (harness-open app)
    (harness-code-action "def greet" "return")
    (harness-wait (lambda () (harness-transcript-has (getenv "HARNESS_DONE"))) 120
                  "the turn to end in the transcript")
    (harness-wait (lambda () (string-match-p (regexp-quote at) (harness-buffer-text app))) 30
                  "the agent's change in the buffer")
    (let ((edited (harness-buffer-text app))
          (edited-disk (harness-file-text app))
          (asked (length harness-questions)))
      (with-current-buffer (get-file-buffer app)
        (setq harness-pick-action (getenv "HARNESS_HUNK_ACTION"))
        (harness-code-action at at))
      (harness-wait (lambda () (not (string-match-p (regexp-quote at) (harness-file-text app))))
                    30 "the change undone on disk")
      (harness-wait (lambda () (equal (harness-buffer-text app) (harness-file-text app))) 30
                    "the buffer to follow the disk")
      `((edited . ,edited)
        (edited_disk . ,edited-disk)
        (after . ,(harness-buffer-text app))
        (after_disk . ,(harness-file-text app))
        (menu . ,(car harness-menus))
        (asked . ,(harness-questions-since asked))
        (questions . ,(vconcat (reverse harness-questions)))))))

(defun harness-run-session ()
  "M-: (eglot-execute-command (eglot-current-server) \"acp.newSession\" []): which agent?"
  (harness-open (expand-file-name "src/app.py" (getenv "HARNESS_WORKSPACE")))
  (let* ((answer (eglot-execute-command (eglot-current-server) "acp.newSession" []))
         (transcript (eglot--uri-to-path (plist-get answer :transcript))))
    `((session_id . ,(plist-get answer :sessionId))
      (transcript . ,(harness-file-text transcript))
      (questions . ,(vconcat (reverse harness-questions))))))

(defun harness-run ()
  (let ((result (pcase (or (getenv "HARNESS_FLOW") "ask")
                  ("ask" (harness-run-ask))
                  ("disk" (harness-run-disk))
                  ("session" (harness-run-session))
                  ("hunk" (harness-run-hunk))
                  (flow (error "unknown HARNESS_FLOW %s" flow)))))
    (with-temp-file (getenv "HARNESS_OUT")
      (insert (json-encode result)))))

(condition-case err
    (harness-run)
  (error
   (with-temp-file (getenv "HARNESS_OUT")
     (insert (json-encode `((error . ,(error-message-string err))
                            (questions . ,(vconcat (reverse harness-questions)))
                            (edits . ,(vconcat (mapcar #'vconcat (reverse harness-edits))))
                            (buffers . ,(vconcat (mapcar #'buffer-name (buffer-list))))
                            (events . ,(harness-events))
                            (texts . ,(vconcat
                                       (mapcar (lambda (b) (with-current-buffer b (buffer-string)))
                                               (cl-remove-if-not #'buffer-file-name (buffer-list)))))))))))
(kill-emacs 0)
