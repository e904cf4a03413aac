;;; harness.el --- drive real Emacs + eglot against acp-lsp, as a user would  -*- lexical-binding: t -*-
;;
;; The only acp-lsp configuration is the server entry in `eglot-server-programs' (what a user
;; writes). Everything else here stands in for the user: it opens a file, selects a region,
;; picks a code action and answers prompts the way a person at the keyboard would, then
;; records what Emacs shows. Results go to $HARNESS_OUT as JSON.

(require 'cl-lib)
(require 'json)
(require 'eglot)

;; --- the user's configuration: one line ---
(add-to-list 'eglot-server-programs
             `(python-mode . ,(split-string (getenv "ACP_LSP_SERVER"))))

;; --- the stand-in user ---
(defvar harness-questions nil "Every question Emacs asked, newest first.")
(defvar harness-pick-action (getenv "HARNESS_ACTION") "The code action to pick (a prefix).")

(defun harness-completing-read (prompt collection &rest _)
  "Answer like the user: the code action asked for, \"Allow once\" for permissions."
  (push prompt harness-questions)
  (let* ((choices (if (functionp collection) (all-completions "" collection) collection))
         (titles (mapcar (lambda (c) (if (consp c) (car c) c)) choices)))
    (or (cl-find-if (lambda (c) (string-prefix-p harness-pick-action c)) titles)
        (cl-find-if (lambda (c) (string-match-p "Allow once" c)) titles)
        (car titles))))
(advice-add 'completing-read :override #'harness-completing-read)
(advice-add 'y-or-n-p :override (lambda (prompt) (push prompt harness-questions) t))
(advice-add 'yes-or-no-p :override (lambda (prompt) (push prompt harness-questions) t))

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

(defun harness-run ()
  (let* ((ws (file-name-as-directory (getenv "HARNESS_WORKSPACE")))
         (app (expand-file-name "src/app.py" ws))
         (transcripts (file-name-as-directory (getenv "HARNESS_TRANSCRIPTS")))
         (result nil))
    (find-file app)
    (python-mode)
    (apply #'eglot (eglot--guess-contact))
    (harness-wait (lambda () (eglot-current-server)) 30 "eglot to connect")
    (let ((original (buffer-string)))
      ;; select the greet function and ask the agent about it through a code action
      (goto-char (point-min))
      (search-forward "def greet")
      (beginning-of-line)
      (let ((beg (point)))
        (forward-line 2)
        ;; as from the keyboard (eglot shows a mouse menu when the last event was a click)
        (let ((last-nonmenu-event ?\C-m))
          (eglot-code-actions beg (point) nil t)))
      ;; the answer streams into the transcript buffer
      (harness-wait
       (lambda ()
         (cl-some (lambda (b)
                    (and (buffer-file-name b)
                         (string-prefix-p transcripts (buffer-file-name b))
                         (with-current-buffer b
                           (save-excursion (goto-char (point-min))
                                           (search-forward "_status: idle_" nil t)))))
                  (buffer-list)))
       60 "the turn to end in the transcript")
      (let* ((tbuf (cl-find-if (lambda (b) (and (buffer-file-name b)
                                                (string-prefix-p transcripts (buffer-file-name b))))
                               (buffer-list)))
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
    (with-temp-file (getenv "HARNESS_OUT")
      (insert (json-encode result)))))

(condition-case err
    (harness-run)
  (error
   (with-temp-file (getenv "HARNESS_OUT")
     (insert (json-encode `((error . ,(error-message-string err))
                            (questions . ,(vconcat (reverse harness-questions)))
                            (buffers . ,(vconcat (mapcar #'buffer-name (buffer-list))))
                            (events . ,(let ((b (cl-find-if (lambda (b) (string-match-p "events" (buffer-name b))) (buffer-list))))
                                         (and b (with-current-buffer b
                                                  (buffer-substring-no-properties (max (point-min) (- (point-max) 6000)) (point-max))))))
                            (texts . ,(vconcat
                                       (mapcar (lambda (b) (with-current-buffer b (buffer-string)))
                                               (cl-remove-if-not #'buffer-file-name (buffer-list)))))))))))
(kill-emacs 0)
