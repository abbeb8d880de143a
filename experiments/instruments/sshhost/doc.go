// Package sshhost runs the server role of a TLS study on a second machine
// over SSH. That is, it copies the one static pqrepro binary there
// (checked by its SHA-256 on the remote side), starts a role of it
// (pqrepro remote ...) whose life is tied to the SSH session, records the
// remote machine's provenance (CPU, kernel, OS, binary hash, clock offset
// estimate) and stops what it started.
//
// # Why the system ssh client
//
// The destination is whatever the user would type after `ssh`: a Host
// alias of ~/.ssh/config with its HostName, User, Port, IdentityFile,
// ProxyJump, Match and Include blocks, keys in the agent
// (SSH_AUTH_SOCK) or on a hardware token, and the user's known_hosts
// (hashed or not, with @cert-authority and @revoked lines). OpenSSH's
// own client honours all of that by definition; golang.org/x/crypto/ssh
// would need a re-implementation of the config language (ssh_config(5))
// that would silently differ from what `ssh host` does on the same
// machine. So every operation is one `ssh` process (ssh(1)) with
//
//	-T -o BatchMode=yes -o StrictHostKeyChecking=yes
//	-o ControlMaster=no -o ControlPath=none
//	-o ServerAliveInterval=2 -o ServerAliveCountMax=3
//
// given on the command line, where they take precedence over the
// configuration files (ssh_config(5): "the first obtained value will be
// used"): never a password prompt, an unknown or changed host key is
// refused (ErrHostKey) even if the user's config says otherwise, and no
// multiplexed master outlives the run or hides a dropped connection.
//
// # Lifetime of the remote process
//
// A role started by Start writes its PID first and is fed a heartbeat (one
// byte a second) on its standard input. It exits when its input ends (the
// SSH session closed) or when no heartbeat arrived for Watchdog (the
// connection died without a close, which sshd may notice much later);
// Stop closes the input, waits for the session to end, and kills the PID
// over a fresh connection if it does not. So a run that stops for any
// reason leaves nothing running on the remote host.
package sshhost
