/*
 * pqssl: a TLS 1.3 server and client on OpenSSL 3.5 for Study A, the role
 * `openssl s_server` / `s_client` played in the original study, but one
 * process each so that handshakes run back to back.
 *
 *   pqssl server -fd N -cert CHAIN.pem -key KEY.pem -groups LIST
 *   pqssl client -ca CA.pem -groups LIST -name HOST
 *
 * The server accepts on the listening socket it inherits as fd N, one
 * connection at a time, and exits when its standard input closes. The
 * client makes one connection per line "dial IP:PORT" on standard input.
 * Both write one CSV line per connection to standard output (the client
 * also its NSS key log lines, prefixed "keylog,"):
 *
 *   server,<peer>,<accept_unix_ns>,<ns>,<version>,<group>,<hrr>,<resumed>,<status>,<message>
 *   client,<local>,<server>,<start_unix_ns>,<ns>,<version>,<group>,<hrr>,<resumed>,<cert_key>,<certs>,<status>,<message>
 *
 * <ns> is accept to server handshake complete, or connect start to client
 * handshake complete (CLOCK_MONOTONIC); <hrr> is 1 when the handshake had a
 * HelloRetryRequest (RFC 8446 4.1.4), seen as a second ClientHello or
 * ServerHello handshake message in the message callback. TLS 1.3 only, no
 * session tickets, no resumption, TCP_NODELAY on both sides (as Go's
 * net package sets it). The checks against the configuration are made by
 * the Go driver (experiments/openssl), which reads these lines.
 */
#define _GNU_SOURCE
#include <arpa/inet.h>
#include <errno.h>
#include <netinet/in.h>
#include <netinet/tcp.h>
#include <poll.h>
#include <signal.h>
#include <stdint.h>
#include <stdio.h>
#include <stdlib.h>
#include <string.h>
#include <sys/socket.h>
#include <time.h>
#include <unistd.h>

#include <openssl/err.h>
#include <openssl/evp.h>
#include <openssl/ssl.h>
#include <openssl/x509.h>

static int64_t now_ns(clockid_t c)
{
    struct timespec ts;
    clock_gettime(c, &ts);
    return (int64_t)ts.tv_sec * 1000000000 + ts.tv_nsec;
}

/* hellos counts the ClientHello and ServerHello messages of one handshake. */
struct hellos {
    int client, server;
};

static void msg_cb(int write_p, int version, int content_type, const void *buf, size_t len, SSL *ssl, void *arg)
{
    struct hellos *h = arg;
    (void)write_p, (void)version, (void)ssl;
    if (h == NULL || content_type != SSL3_RT_HANDSHAKE || len < 1)
        return;
    switch (((const unsigned char *)buf)[0]) {
    case SSL3_MT_CLIENT_HELLO:
        h->client++;
        break;
    case SSL3_MT_SERVER_HELLO: /* a HelloRetryRequest is a ServerHello message */
        h->server++;
        break;
    }
}

static void keylog_cb(const SSL *ssl, const char *line)
{
    (void)ssl;
    printf("keylog,%s\n", line);
}

/* errtext describes the last failure without commas or newlines. */
static void errtext(char *out, size_t n, SSL *ssl, int ret, const char *what)
{
    char e[256] = "";
    unsigned long code = ERR_get_error();
    if (code != 0)
        ERR_error_string_n(code, e, sizeof e);
    else if (errno != 0)
        snprintf(e, sizeof e, "%s", strerror(errno));
    snprintf(out, n, "%s failed (SSL_get_error %d): %s", what, ssl ? SSL_get_error(ssl, ret) : 0, e);
    for (char *p = out; *p; p++)
        if (*p == ',' || *p == '\n' || *p == '\r')
            *p = ';';
    ERR_clear_error();
}

static void addr_string(const struct sockaddr_storage *sa, char *out, size_t n)
{
    char ip[INET6_ADDRSTRLEN] = "?";
    if (sa->ss_family == AF_INET) {
        const struct sockaddr_in *a = (const void *)sa;
        inet_ntop(AF_INET, &a->sin_addr, ip, sizeof ip);
        snprintf(out, n, "%s:%d", ip, ntohs(a->sin_port));
    } else if (sa->ss_family == AF_INET6) {
        const struct sockaddr_in6 *a = (const void *)sa;
        inet_ntop(AF_INET6, &a->sin6_addr, ip, sizeof ip);
        snprintf(out, n, "[%s]:%d", ip, ntohs(a->sin6_port));
    } else {
        snprintf(out, n, "?");
    }
}

static const char *group_name(SSL *ssl)
{
    int g = SSL_get_negotiated_group(ssl);
    const char *name = g ? SSL_group_to_name(ssl, g) : NULL;
    return name ? name : "";
}

/* cert_key names the key of a certificate as experiments/handshake does. */
static void cert_key(X509 *x, char *out, size_t n)
{
    EVP_PKEY *pk = x ? X509_get0_pubkey(x) : NULL;
    const char *t = pk ? EVP_PKEY_get0_type_name(pk) : NULL;
    char grp[64] = "";
    if (t == NULL)
        snprintf(out, n, "none");
    else if (strcmp(t, "ED25519") == 0)
        snprintf(out, n, "ed25519");
    else if (strcmp(t, "EC") == 0 && EVP_PKEY_get_group_name(pk, grp, sizeof grp, NULL) && strcmp(grp, "prime256v1") == 0)
        snprintf(out, n, "ecdsa-p256");
    else if (strcmp(t, "ML-DSA-44") == 0)
        snprintf(out, n, "mldsa44");
    else if (strcmp(t, "ML-DSA-65") == 0)
        snprintf(out, n, "mldsa65");
    else if (strcmp(t, "ML-DSA-87") == 0)
        snprintf(out, n, "mldsa87");
    else
        snprintf(out, n, "%s%s%s", t, grp[0] ? ":" : "", grp);
}

static void nodelay(int fd)
{
    int one = 1;
    setsockopt(fd, IPPROTO_TCP, TCP_NODELAY, &one, sizeof one);
}

static SSL_CTX *new_ctx(const SSL_METHOD *m, const char *groups)
{
    SSL_CTX *ctx = SSL_CTX_new(m);
    if (ctx == NULL || !SSL_CTX_set_min_proto_version(ctx, TLS1_3_VERSION) || !SSL_CTX_set_max_proto_version(ctx, TLS1_3_VERSION)) {
        fprintf(stderr, "pqssl: cannot make a TLS 1.3 context\n");
        ERR_print_errors_fp(stderr);
        exit(2);
    }
    if (!SSL_CTX_set1_groups_list(ctx, groups)) {
        fprintf(stderr, "pqssl: OpenSSL does not accept the groups list %s\n", groups);
        ERR_print_errors_fp(stderr);
        exit(2);
    }
    SSL_CTX_set_session_cache_mode(ctx, SSL_SESS_CACHE_OFF);
    SSL_CTX_set_options(ctx, SSL_OP_NO_TICKET);
    SSL_CTX_set_num_tickets(ctx, 0);
    SSL_CTX_set_msg_callback(ctx, msg_cb);
    return ctx;
}

/* drain reads until the peer's close_notify or EOF. */
static void drain(SSL *ssl)
{
    char buf[512];
    while (SSL_read(ssl, buf, sizeof buf) > 0)
        ;
}

static int server(int lfd, const char *cert, const char *key, const char *groups)
{
    SSL_CTX *ctx = new_ctx(TLS_server_method(), groups);
    if (!SSL_CTX_use_certificate_chain_file(ctx, cert) || !SSL_CTX_use_PrivateKey_file(ctx, key, SSL_FILETYPE_PEM) || !SSL_CTX_check_private_key(ctx)) {
        fprintf(stderr, "pqssl: cannot load certificate %s and key %s\n", cert, key);
        ERR_print_errors_fp(stderr);
        return 2;
    }
    printf("ready,%s\n", OpenSSL_version(OPENSSL_VERSION));
    fflush(stdout);
    for (;;) {
        struct pollfd p[2] = {{.fd = lfd, .events = POLLIN}, {.fd = 0, .events = POLLIN}};
        if (poll(p, 2, -1) < 0) {
            if (errno == EINTR)
                continue;
            perror("pqssl: poll");
            return 1;
        }
        if (p[1].revents) { /* standard input closed (or a stray byte): stop */
            char c;
            if (read(0, &c, 1) <= 0)
                return 0;
            continue;
        }
        if (!(p[0].revents & POLLIN))
            continue;
        struct sockaddr_storage peer;
        socklen_t pl = sizeof peer;
        int fd = accept(lfd, (struct sockaddr *)&peer, &pl);
        if (fd < 0) {
            if (errno == EINTR || errno == EAGAIN || errno == ECONNABORTED)
                continue;
            perror("pqssl: accept");
            return 1;
        }
        int64_t wall = now_ns(CLOCK_REALTIME), t0 = now_ns(CLOCK_MONOTONIC);
        nodelay(fd);
        char who[80], msg[400] = "";
        addr_string(&peer, who, sizeof who);
        struct hellos h = {0, 0};
        SSL *ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        SSL_set_msg_callback_arg(ssl, &h);
        errno = 0;
        int r = SSL_accept(ssl);
        int64_t t1 = now_ns(CLOCK_MONOTONIC);
        if (r != 1) {
            errtext(msg, sizeof msg, ssl, r, "SSL_accept");
            printf("server,%s,%lld,0,,,0,0,err,%s\n", who, (long long)wall, msg);
        } else {
            printf("server,%s,%lld,%lld,%s,%s,%d,%d,ok,\n", who, (long long)wall, (long long)(t1 - t0), SSL_get_version(ssl),
                   group_name(ssl), h.client >= 2, SSL_session_reused(ssl));
        }
        fflush(stdout);
        if (r == 1) {
            drain(ssl);
            SSL_shutdown(ssl);
        }
        SSL_free(ssl);
        close(fd);
    }
}

static int client(const char *ca, const char *groups, const char *name)
{
    SSL_CTX *ctx = new_ctx(TLS_client_method(), groups);
    if (!SSL_CTX_load_verify_file(ctx, ca)) {
        fprintf(stderr, "pqssl: cannot load trust anchors %s\n", ca);
        ERR_print_errors_fp(stderr);
        return 2;
    }
    SSL_CTX_set_verify(ctx, SSL_VERIFY_PEER, NULL);
    SSL_CTX_set_keylog_callback(ctx, keylog_cb);
    printf("ready,%s\n", OpenSSL_version(OPENSSL_VERSION));
    fflush(stdout);
    char line[256];
    while (fgets(line, sizeof line, stdin) != NULL) {
        char host[200];
        int port;
        if (sscanf(line, "dial %199[^:\n]:%d", host, &port) != 2) {
            fprintf(stderr, "pqssl: want 'dial IP:PORT', got %s", line);
            return 2;
        }
        struct sockaddr_in sa = {.sin_family = AF_INET, .sin_port = htons(port)};
        if (inet_pton(AF_INET, host, &sa.sin_addr) != 1) {
            fprintf(stderr, "pqssl: %s is not an IPv4 address\n", host);
            return 2;
        }
        char local[80] = "", remote[256] = "", msg[400] = "", key[64] = "";
        int64_t wall = now_ns(CLOCK_REALTIME), t0 = now_ns(CLOCK_MONOTONIC);
        int fd = socket(AF_INET, SOCK_STREAM | SOCK_CLOEXEC, 0);
        snprintf(remote, sizeof remote, "%s:%d", host, port);
        if (fd < 0 || connect(fd, (struct sockaddr *)&sa, sizeof sa) != 0) {
            printf("client,,%s,%lld,0,,,0,0,,0,err,connect: %s\n", remote, (long long)wall, strerror(errno));
            fflush(stdout);
            if (fd >= 0)
                close(fd);
            continue;
        }
        nodelay(fd);
        struct sockaddr_storage ls;
        socklen_t ll = sizeof ls;
        getsockname(fd, (struct sockaddr *)&ls, &ll);
        addr_string(&ls, local, sizeof local);
        struct hellos h = {0, 0};
        SSL *ssl = SSL_new(ctx);
        SSL_set_fd(ssl, fd);
        SSL_set_msg_callback_arg(ssl, &h);
        SSL_set_tlsext_host_name(ssl, name);
        SSL_set1_host(ssl, name);
        errno = 0;
        int r = SSL_connect(ssl);
        int64_t t1 = now_ns(CLOCK_MONOTONIC);
        if (r != 1) {
            errtext(msg, sizeof msg, ssl, r, "SSL_connect");
            printf("client,%s,%s,%lld,0,,,0,0,,0,err,%s\n", local, remote, (long long)wall, msg);
        } else {
            X509 *peer = SSL_get0_peer_certificate(ssl);
            STACK_OF(X509) *chain = SSL_get_peer_cert_chain(ssl);
            cert_key(peer, key, sizeof key);
            const char *status = SSL_get_verify_result(ssl) == X509_V_OK ? "ok" : "err";
            printf("client,%s,%s,%lld,%lld,%s,%s,%d,%d,%s,%d,%s,%s\n", local, remote, (long long)wall, (long long)(t1 - t0),
                   SSL_get_version(ssl), group_name(ssl), h.server >= 2, SSL_session_reused(ssl), key, chain ? sk_X509_num(chain) : 0, status,
                   status[0] == 'o' ? "" : X509_verify_cert_error_string(SSL_get_verify_result(ssl)));
        }
        fflush(stdout);
        if (r == 1) {
            SSL_shutdown(ssl);  /* close_notify */
            shutdown(fd, SHUT_WR); /* and FIN, as Go's CloseWrite */
            drain(ssl);         /* until the server's close_notify and FIN */
        }
        SSL_free(ssl);
        close(fd);
    }
    return 0;
}

static const char *arg(int argc, char **argv, const char *flag)
{
    for (int i = 2; i + 1 < argc; i += 2)
        if (strcmp(argv[i], flag) == 0)
            return argv[i + 1];
    fprintf(stderr, "pqssl %s: missing %s\n", argc > 1 ? argv[1] : "", flag);
    exit(2);
}

int main(int argc, char **argv)
{
    signal(SIGPIPE, SIG_IGN);
    /* No openssl.cnf: the build's OPENSSLDIR is not ours to read. */
    if (!OPENSSL_init_ssl(OPENSSL_INIT_NO_LOAD_CONFIG, NULL)) {
        fprintf(stderr, "pqssl: OPENSSL_init_ssl failed\n");
        return 2;
    }
    if (argc >= 2 && strcmp(argv[1], "server") == 0)
        return server(atoi(arg(argc, argv, "-fd")), arg(argc, argv, "-cert"), arg(argc, argv, "-key"), arg(argc, argv, "-groups"));
    if (argc >= 2 && strcmp(argv[1], "client") == 0)
        return client(arg(argc, argv, "-ca"), arg(argc, argv, "-groups"), arg(argc, argv, "-name"));
    fprintf(stderr, "usage: pqssl server -fd N -cert CHAIN.pem -key KEY.pem -groups LIST\n"
                    "       pqssl client -ca CA.pem -groups LIST -name HOST\n");
    return 2;
}
