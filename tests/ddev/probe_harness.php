<?php

/**
 * @file
 * Runs methods of the project's probe.php on stand-ins for the few Drupal objects they touch.
 *
 * Usage: php probe_harness.php PROBE < spec.json, where spec is
 *   {"call": "fieldItems", "field": FIELD}, {"call": "fieldItemsMany", "fields": {KEY: FIELD}}
 *   {"call": "exportEntity", "entity": ENTITY}, or {"call": "viewMany", "views": {id: VIEW},
 *   "questions": [{"view_id", "display_id", "arguments"}]} (VIEW: see FakeView), or
 *   {"call": "method", "method": NAME, "arguments": [...]} for a method on plain JSON values, or
 *   {"call": "withDrupal", "site": SITE, "method": NAME, "arguments": [...]} for one that reaches
 *   \Drupal's services (SITE: see build_drupal), or {"call": "menuMany", ...} for menus()
 * FIELD  = {"type": "<field type>", "computed": bool, "items": [ITEM...]}
 * ITEM   = {"values": {...stored values, as PDO returns them: strings}, "types": {property: data type},
 *           "target": ENTITY|null}
 * ENTITY = {"entity_type", "uuid", "id", "bundle", "langcode", "keys": {...}, "revision_metadata_keys": {...},
 *           "fields": {name: FIELD}, "user": bool}
 * The stand-ins implement only what the probe calls; the entity type has no hasIntegerId()
 * (it exists from Drupal 11.4 only), so a probe that calls it fails here as on 10.3.
 * Prints the method's result as JSON, encoded as the probe encodes its answer.
 */

namespace Drupal\Core\TypedData {
  interface PrimitiveInterface {
    public function getValue();
    public function getCastedValue();
  }
}

namespace Drupal\Core\Entity {
  interface EntityInterface {}
  interface ContentEntityInterface extends EntityInterface {}
}

namespace Drupal\Core\Field {
  interface FieldItemInterface {}
  interface FieldItemListInterface extends \IteratorAggregate {}
}

namespace Drupal\user {
  interface UserInterface extends \Drupal\Core\Entity\ContentEntityInterface {}
}

namespace Drupal\user\Entity {
  // The anonymous account a visitor's access is checked for.
  final class User {
    public static function getAnonymousUser(): object { return (object) ['uid' => 0]; }
  }
}

namespace Drupal\Core {
  // Url::fromUri() as the menu probe uses it: what each URI resolves to is the spec's "urls"
  // ({uri: {"route", "parameters"} | {"external": true} | {"base": "base:path"}}); another
  // URI is refused as Drupal refuses a malformed one.
  final class Url {
    public static array $urls = [];
    private function __construct(private string $uri, private array $spec) {}
    public static function fromUri(string $uri): self {
      if (!isset(self::$urls[$uri])) {
        throw new \InvalidArgumentException("The URI '$uri' is invalid.");
      }
      return new self($uri, self::$urls[$uri]);
    }
    public function isExternal(): bool { return !empty($this->spec['external']); }
    public function isRouted(): bool { return isset($this->spec['route']); }
    public function getUri(): string { return $this->spec['base'] ?? $this->uri; }
    public function getRouteName(): string { return $this->spec['route']; }
    public function getRouteParameters(): array { return $this->spec['parameters'] ?? []; }
  }
}

namespace Composer {
  // What Composer's runtime API answers: the installed packages and their source references.
  final class InstalledVersions {
    public static array $references = [];
    public static function isInstalled(string $package): bool { return array_key_exists($package, self::$references); }
    public static function getReference(string $package): ?string { return self::$references[$package]; }
  }
}

namespace Drupal\views {
  // Views::getView() hands out a fresh stand-in view per call, as Drupal hands out executables.
  final class Views {
    public static array $specs = [];
    public static function getView(string $id): ?\FakeView {
      return isset(self::$specs[$id]) ? new \FakeView(self::$specs[$id]) : NULL;
    }
  }
}

namespace {

  use Drupal\Core\Entity\ContentEntityInterface;
  use Drupal\Core\Field\FieldItemInterface;
  use Drupal\Core\Field\FieldItemListInterface;
  use Drupal\Core\TypedData\PrimitiveInterface;
  use Drupal\user\UserInterface;

  final class FakePrimitive implements PrimitiveInterface {
    public function __construct(private mixed $value, private string $type) {}
    public function getValue() { return $this->value; }
    // As core's IntegerData, BooleanData, FloatData and StringData cast.
    public function getCastedValue() {
      return match ($this->type) {
        'integer', 'timestamp' => (int) $this->value,
        'boolean' => (bool) $this->value,
        'float' => (float) $this->value,
        default => (string) $this->value,
      };
    }
  }

  final class FakeReferenceProperty {
    public function __construct(private ?object $target) {}
    public function getValue() { return $this->target; }
  }

  final class FakeItem implements FieldItemInterface {
    public function __construct(private array $values, private array $types, private ?object $target) {}
    public function getValue(): array { return $this->values; }
    public function getProperties(): array {
      $properties = [];
      foreach ($this->types as $name => $type) {
        $properties[$name] = new FakePrimitive($this->values[$name] ?? NULL, $type);
      }
      $properties['entity'] = new FakeReferenceProperty($this->target);
      return $properties;
    }
    public function get(string $name) { return $this->getProperties()[$name]; }
  }

  final class FakeFieldDefinition {
    public function __construct(private string $type, private bool $computed) {}
    public function getType(): string { return $this->type; }
    public function isComputed(): bool { return $this->computed; }
  }

  final class FakeItemList implements FieldItemListInterface {
    public function __construct(private FakeFieldDefinition $definition, private array $items) {}
    public function getIterator(): \Iterator { return new \ArrayIterator($this->items); }
    public function getFieldDefinition(): FakeFieldDefinition { return $this->definition; }
    public function isEmpty(): bool { return !$this->items; }
    public function getValue(): array { return array_map(fn ($item) => $item->getValue(), $this->items); }
  }

  final class FakeEntityType {
    public function __construct(private array $keys, private array $revisionKeys, private string $id = '') {}
    public function id(): string { return $this->id; }
    public function hasKey(string $key): bool { return isset($this->keys[$key]); }
    public function getKey(string $key) { return $this->keys[$key] ?? FALSE; }
    public function hasRevisionMetadataKey(string $key): bool { return isset($this->revisionKeys[$key]); }
    public function getRevisionMetadataKey(string $key) { return $this->revisionKeys[$key] ?? FALSE; }
  }

  final class FakeLanguage {
    public function __construct(private string $id) {}
    public function getId(): string { return $this->id; }
  }

  class FakeEntity implements ContentEntityInterface {
    public function __construct(private array $spec, private array $fields) {}
    public function getEntityType(): FakeEntityType {
      return new FakeEntityType($this->spec['keys'] ?? [], $this->spec['revision_metadata_keys'] ?? []);
    }
    public function getEntityTypeId(): string { return $this->spec['entity_type']; }
    public function uuid(): string { return $this->spec['uuid']; }
    public function id() { return $this->spec['id'] ?? NULL; }
    public function bundle(): string { return $this->spec['bundle'] ?? $this->spec['entity_type']; }
    public function language(): FakeLanguage { return new FakeLanguage($this->spec['langcode'] ?? 'en'); }
    public function getFields(): array { return $this->fields; }
  }

  final class FakeUser extends FakeEntity implements UserInterface {}

  final class FakeViolation {
    public function __construct(private array $spec) {}
    public function getPropertyPath(): string { return $this->spec['path']; }
    public function getMessage(): string { return $this->spec['message']; }
  }

  /**
   * An entity updateEntity() changes: {"entity_type", "uuid", "id", "bundle", "label", "fields":
   * [name], "violations": [{"path", "message"}]}. What was set and whether it was saved is kept.
   */
  final class FakeEditableEntity implements ContentEntityInterface {
    public array $set = [];
    public bool $saved = FALSE;
    public function __construct(private array $spec) {}
    public function getEntityTypeId(): string { return $this->spec['entity_type']; }
    public function id() { return (string) $this->spec['id']; }
    public function uuid(): string { return $this->spec['uuid']; }
    public function bundle(): string { return $this->spec['bundle']; }
    public function label(): string { return $this->set['title'][0]['value'] ?? $this->spec['label']; }
    public function hasField(string $name): bool { return in_array($name, $this->spec['fields'], TRUE); }
    public function set(string $name, $value): void { $this->set[$name] = $value; }
    public function validate(): array { return array_map(fn ($v) => new FakeViolation($v), $this->spec['violations'] ?? []); }
    public function save(): void { $this->saved = TRUE; }
  }

  final class FakeRowEntity implements ContentEntityInterface {
    public function __construct(private array $row) {}
    public function id() { return (string) $this->row['id']; }
    public function uuid(): string { return $this->row['uuid']; }
    public function label(): string { return $this->row['label']; }
  }

  final class FakeHandler {
    public function __construct(private bool $broken) {}
    public function broken(): bool { return $this->broken; }
  }

  final class FakeDisplayHandler {
    public function __construct(private array $broken, private bool $enabled = TRUE) {}
    public function isEnabled(): bool { return $this->enabled; }
    public function getHandlers(string $type): array {
      $handlers = ['nid' => new FakeHandler(FALSE)];
      foreach ($this->broken as $name) {
        [$kind, $id] = explode('.', $name, 2);
        if ($kind === $type) {
          $handlers[$id] = new FakeHandler(TRUE);
        }
      }
      return $handlers;
    }
  }

  final class FakeViewStorage {
    public function __construct(private array $spec) {}
    public function status(): bool { return $this->spec['status'] ?? TRUE; }
    public function get(string $key) { return $key === 'base_field' ? 'nid' : NULL; }
    public function getDisplay(string $id): ?array {
      $plugin = $this->spec['displays'][$id] ?? NULL;
      return $plugin === NULL ? NULL : ['display_plugin' => $plugin];
    }
  }

  /**
   * A view as the probe drives it. VIEW = {"status", "displays": {id: plugin}, "broken": [type.id],
   * "validate": {display: [message]}, "exception": "message"|null, "build_info": {...},
   * "orderby": [alias], "rows": [{"id", "uuid", "label", "values": {alias: stored value}}],
   * "total_rows": int|null}. What setArguments() received is kept in FakeView::$arguments,
   * setExposedInput()'s in FakeView::$exposed and setCurrentPage()'s in FakeView::$page (null:
   * never called).
   */
  final class FakeView {
    public static array $arguments = [];
    public static ?array $exposed = NULL;
    public static ?int $page = NULL;
    public FakeViewStorage $storage;
    public ?FakeDisplayHandler $display_handler = NULL;
    public array $result = [];
    public array $build_info = [];
    public ?int $total_rows = NULL;
    public object $query;
    public function __construct(private array $spec) {
      $this->storage = new FakeViewStorage($spec);
      $this->query = (object) ['orderby' => []];
    }
    public function setDisplay(string $id): bool {
      if ($this->storage->getDisplay($id) === NULL) {
        return FALSE;
      }
      $this->display_handler = new FakeDisplayHandler($this->spec['broken'] ?? [],
        !in_array($id, $this->spec['disabled_displays'] ?? [], TRUE));
      return TRUE;
    }
    public function validate(): array { return $this->spec['validate'] ?? []; }
    public function setArguments(array $arguments): void { self::$arguments = $arguments; }
    public function setExposedInput(array $input): void { self::$exposed = $input; }
    public function setCurrentPage(int $page): void { self::$page = $page; }
    public function preExecute(): void {}
    public function execute(): void {
      if (isset($this->spec['exception'])) {
        throw new \RuntimeException($this->spec['exception']);
      }
      $this->build_info = $this->spec['build_info'] ?? [];
      $this->query->orderby = array_map(fn ($alias) => ['field' => $alias, 'direction' => 'ASC'],
        $this->spec['orderby'] ?? []);
      foreach ($this->spec['rows'] ?? [] as $row) {
        $this->result[] = (object) (($row['values'] ?? []) + ['_entity' => new FakeRowEntity($row)]);
      }
      $this->total_rows = $this->spec['total_rows'] ?? NULL;
    }
    public function destroy(): void {}
  }

  /**
   * \Drupal's static service container, for the probe methods that reach services. SITE =
   * {"modules": {name: {"path", "info": {...}, "schema": int}}, "entity_types": {id: {"keys": {...}}},
   * "storage_fields": {entity_type: [name]}, "post_updates": {module: {"pending": {name: text}}},
   * "count": int}; build_drupal(SITE) fills it.
   */
  final class Drupal {
    const VERSION = '10.3.7';
    public static array $services = [];
    public static function service(string $id) { return self::$services[$id]; }
    public static function hasService(string $id): bool { return isset(self::$services[$id]); }
    public static function moduleHandler() { return self::$services['module_handler']; }
    public static function database() { return self::$services['database']; }
    public static function entityTypeManager() { return self::$services['entity_type.manager']; }
  }

  final class FakeExtension {
    public function __construct(private string $path) {}
    public function getPath(): string { return $this->path; }
  }

  final class FakeModules {
    public function __construct(private array $modules) {}
    public function getModuleList(): array {
      return array_map(fn ($m) => new FakeExtension($m['path']), $this->modules);
    }
    public function getExtensionInfo(string $name): array { return $this->modules[$name]['info'] ?? []; }
    public function getInstalledVersion(string $name): int { return $this->modules[$name]['schema'] ?? -1; }
  }

  final class FakeDatabase {
    public function driver(): string { return 'mysql'; }
    public function version(): string { return '10.11.19-MariaDB'; }
  }

  /** An entity query that records its conditions; counting answers the site's "count". */
  final class FakeQuery {
    public static array $conditions = [];
    public function __construct(private int $count) {}
    public function accessCheck(bool $check): self { return $this; }
    public function condition(string $field, $value, string $operator = '='): self {
      self::$conditions[] = [$field, $value, $operator];
      return $this;
    }
    public function exists(string $field): self { self::$conditions[] = [$field, NULL, 'EXISTS']; return $this; }
    public function notExists(string $field): self { self::$conditions[] = [$field, NULL, 'NOT EXISTS']; return $this; }
    public function count(): self { return $this; }
    public function execute(): int { return $this->count; }
  }

  final class FakeStorage {
    public static array $created = [];
    public function __construct(private int $count, private array $new = []) {}
    public function getQuery(): FakeQuery { return new FakeQuery($this->count); }
    // create($values): the editable entity the site spec's "new" describes, the values recorded.
    public function create(array $values): FakeEditableEntity {
      self::$created[] = $values;
      return new FakeEditableEntity($this->new);
    }
  }

  final class FakeEntityTypes {
    public function __construct(private array $site) {}
    public function hasDefinition(string $id): bool { return isset($this->site['entity_types'][$id]); }
    public function getDefinition(string $id): FakeEntityType {
      return new FakeEntityType($this->site['entity_types'][$id]['keys'] ?? [], [], $id);
    }
    public function getStorage(string $id): FakeStorage {
      return new FakeStorage($this->site['count'] ?? 0, $this->site['new'] ?? []);
    }
    public function getFieldStorageDefinitions(string $id): array {
      return array_fill_keys($this->site['storage_fields'][$id] ?? [], TRUE);
    }
  }

  final class FakePostUpdates {
    public function __construct(private array $pending) {}
    public function getPendingUpdateInformation(): array { return $this->pending; }
  }

  /** A route as the router holds it: its path and defaults (a view's view_id, display_id). */
  final class FakeRoute {
    public function __construct(private array $spec) {}
    public function getPath(): string { return $this->spec['path']; }
    public function getDefault(string $key) { return $this->spec[$key] ?? NULL; }
  }

  /** An entity a route serves; anonymous may view it when it is published. */
  final class FakeRoutedEntity implements \Drupal\Core\Entity\ContentEntityInterface {
    public function __construct(private array $spec) {}
    public function getEntityTypeId(): string { return $this->spec['entity_type']; }
    public function uuid(): string { return $this->spec['uuid']; }
    public function access(string $operation, object $account): bool {
      return $operation === 'view' && ($account->uid ?? NULL) === 0 && !empty($this->spec['published']);
    }
  }

  /**
   * Aliases, the router's candidates and its matcher. PAGES = {"aliases": {alias: system path},
   * "routes": [{"path", "view_id", "display_id"} | {"path", "entity": {"entity_type", "uuid",
   * "published"}}]}, routes in the order the router sorts them (fit, then name).
   */
  final class FakeRouting {
    public function __construct(private array $pages) {}
    public function getPathByAlias(string $alias): string { return $this->pages['aliases'][$alias] ?? $alias; }
    public function getRoutesByPattern(string $pattern): array {
      // Candidates share the pattern's outline: a placeholder route at the same depth is one.
      $depth = count(explode('/', trim($pattern, '/')));
      return array_map(fn ($r) => new FakeRoute($r), array_values(array_filter(
        $this->pages['routes'] ?? [], fn ($r) => count(explode('/', trim($r['path'], '/'))) === $depth)));
    }
    public function match(string $path): array {
      foreach ($this->pages['routes'] ?? [] as $route) {
        if ($route['path'] === $path && isset($route['entity'])) {
          return ['_route' => 'entity', 'entity' => new FakeRoutedEntity($route['entity'])];
        }
      }
      throw new \RuntimeException("No route found for \"$path\"");
    }
  }

  /** A menu_link_content entity as menus() reads it. LINK = {"id", "uuid", "title", "uri",
   * "menu_name", "parent", "weight", "enabled", "expanded"}. */
  final class FakeMenuLink {
    public function __construct(private array $spec) {}
    public function uuid(): string { return $this->spec['uuid']; }
    public function getTitle(): string { return $this->spec['title']; }
    public function get(string $name): object { return (object) ['uri' => $this->spec['uri']]; }
    public function getParentId(): string { return $this->spec['parent'] ?? ''; }
    public function getWeight(): int { return (int) ($this->spec['weight'] ?? 0); }
    public function isEnabled(): bool { return (bool) ($this->spec['enabled'] ?? TRUE); }
    public function isExpanded(): bool { return (bool) ($this->spec['expanded'] ?? FALSE); }
  }

  /** The entity query menus() runs: links whose menu_name is the condition's, by id. */
  final class FakeLinkQuery {
    private string $menu = '';
    public function __construct(private array $links) {}
    public function accessCheck(bool $check): self { return $this; }
    public function condition(string $field, $value): self { $this->menu = (string) $value; return $this; }
    public function sort(string $field): self { return $this; }
    public function execute(): array {
      $ids = array_column(array_filter($this->links, fn ($l) => $l['menu_name'] === $this->menu), 'id');
      sort($ids);
      return array_combine($ids, $ids);
    }
  }

  /** Storage for the menu probe: menus by id (their labels), links, and nodes by id (their UUIDs). */
  final class FakeMenuStorage {
    public function __construct(private string $type, private array $spec) {}
    public function load($id): ?object {
      if ($this->type === 'menu') {
        $label = $this->spec['menus'][$id] ?? NULL;
        return $label === NULL ? NULL : new class($label) { public function __construct(private string $l) {} public function label(): string { return $this->l; } };
      }
      $uuid = $this->spec['entities'][$this->type][(string) $id] ?? NULL;
      return $uuid === NULL ? NULL : new FakeRowEntity(['id' => $id, 'uuid' => $uuid, 'label' => '']);
    }
    public function getQuery(): FakeLinkQuery { return new FakeLinkQuery($this->spec['links']); }
    public function loadMultiple(array $ids): array {
      $links = array_filter($this->spec['links'], fn ($l) => in_array($l['id'], $ids, TRUE));
      usort($links, fn ($a, $b) => $a['id'] <=> $b['id']);
      return array_map(fn ($l) => new FakeMenuLink($l), $links);
    }
  }

  final class FakeMenuEntityTypes {
    public function __construct(private array $spec) {}
    public function hasDefinition(string $id): bool { return TRUE; }
    public function getStorage(string $id): FakeMenuStorage { return new FakeMenuStorage($id, $this->spec); }
  }

  function build_drupal(array $site): void {
    $modules = new FakeModules($site['modules'] ?? []);
    $types = new FakeEntityTypes($site);
    \Drupal::$services = [
      'module_handler' => $modules,
      'extension.list.module' => $modules,
      'update.update_hook_registry' => $modules,
      'update.post_update_registry' => new FakePostUpdates($site['post_updates'] ?? []),
      'database' => new FakeDatabase(),
      'entity_type.manager' => $types,
      'entity_field.manager' => $types,
    ];
    \Composer\InstalledVersions::$references = $site['composer'] ?? [];
  }

  function fake_field(array $spec): FakeItemList {
    $items = [];
    foreach ($spec['items'] as $item) {
      $target = isset($item['target']) ? fake_entity($item['target']) : NULL;
      $items[] = new FakeItem($item['values'], $item['types'] ?? [], $target);
    }
    return new FakeItemList(new FakeFieldDefinition($spec['type'], $spec['computed'] ?? FALSE), $items);
  }

  function fake_entity(array $spec): FakeEntity {
    $fields = array_map('fake_field', $spec['fields'] ?? []);
    return empty($spec['user']) ? new FakeEntity($spec, $fields) : new FakeUser($spec, $fields);
  }

  $spec = json_decode(stream_get_contents(STDIN), TRUE, 512, JSON_THROW_ON_ERROR);
  $extra = [];
  try {
    // The probe builds $apg_probe, then refuses the empty request: only the object is wanted.
    include $argv[1];
  }
  catch (\InvalidArgumentException $e) {
  }
  $flags = JSON_UNESCAPED_SLASHES | JSON_PRESERVE_ZERO_FRACTION | JSON_THROW_ON_ERROR;
  if ($spec['call'] === 'withDrupal') {
    // {"site": SITE, "method": NAME, "arguments": [...], "drupal_root": DIR} -> {"answer", "conditions"}.
    define('DRUPAL_ROOT', $spec['drupal_root'] ?? '/nonexistent');
    build_drupal($spec['site']);
    $method = new \ReflectionMethod($apg_probe, $spec['method']);
    $arguments = $spec['method'] === 'conditionField'
      ? [\Drupal::entityTypeManager()->getDefinition($spec['arguments'][0]), $spec['arguments'][1]]
      : $spec['arguments'];
    $answer = $method->invoke($apg_probe, ...$arguments);
    print json_encode(['answer' => $answer, 'conditions' => FakeQuery::$conditions,
      'created' => FakeStorage::$created], $flags) . "\n";
    exit(0);
  }
  if ($spec['call'] === 'updateEntity') {
    // {"entity": EDITABLE, "values": {...}} -> {"answer", "set", "saved"} or {"error", "set", "saved"}.
    $entity = new FakeEditableEntity($spec['entity']);
    $out = [];
    try {
      $out['answer'] = (new \ReflectionMethod($apg_probe, 'updateEntity'))->invoke($apg_probe, $entity, $spec['values']);
    }
    catch (\InvalidArgumentException $e) {
      $out['error'] = $e->getMessage();
    }
    print json_encode($out + ['set' => (object) $entity->set, 'saved' => $entity->saved], $flags) . "\n";
    exit(0);
  }
  if ($spec['call'] === 'method') {
    // Any method on plain JSON arguments: {"method": NAME, "arguments": [...]}.
    $method = new \ReflectionMethod($apg_probe, $spec['method']);
    print json_encode($method->invoke($apg_probe, ...$spec['arguments']), $flags) . "\n";
    exit(0);
  }
  if ($spec['call'] === 'viewMany') {
    // {"views": {id: VIEW}, "questions": [QUESTION]} -> [{"answer": view(), "arguments": [...]}].
    \Drupal\views\Views::$specs = $spec['views'];
    $method = new \ReflectionMethod($apg_probe, 'view');
    $out = [];
    foreach ($spec['questions'] as $question) {
      FakeView::$arguments = [];
      FakeView::$exposed = NULL;
      FakeView::$page = NULL;
      $out[] = ['answer' => $method->invoke($apg_probe, $question), 'arguments' => FakeView::$arguments,
        'exposed' => FakeView::$exposed, 'page' => FakeView::$page];
    }
    print json_encode($out, $flags) . "\n";
    exit(0);
  }
  if ($spec['call'] === 'pageMany') {
    // {"views": {id: VIEW}, "pages": PAGES, "questions": [{"path"}]} -> [page()]; with
    // "with_arguments": true, [{"answer": page(), "arguments": what its view got}].
    \Drupal\views\Views::$specs = $spec['views'] ?? [];
    $routing = new FakeRouting($spec['pages']);
    \Drupal::$services = ['path_alias.manager' => $routing, 'router.route_provider' => $routing,
      'router.no_access_checks' => $routing];
    if (!empty($spec['no_path_alias'])) {
      // A site without the path_alias module has no alias manager.
      unset(\Drupal::$services['path_alias.manager']);
    }
    $method = new \ReflectionMethod($apg_probe, 'page');
    if (!empty($spec['with_arguments'])) {
      // Each page() with the contextual arguments its view got: [{"answer", "arguments"}].
      $out = [];
      foreach ($spec['questions'] as $question) {
        FakeView::$arguments = [];
        $out[] = ['answer' => $method->invoke($apg_probe, $question), 'arguments' => FakeView::$arguments];
      }
      print json_encode($out, $flags) . "\n";
      exit(0);
    }
    print json_encode(array_map(fn ($q) => $method->invoke($apg_probe, $q), $spec['questions']), $flags) . "\n";
    exit(0);
  }
  if ($spec['call'] === 'menuMany') {
    // {"menus": {id: label}, "links": [LINK], "urls": {...}, "entities": {type: {id: uuid}},
    // "questions": [menu id]} -> menus().
    \Drupal\Core\Url::$urls = $spec['urls'] ?? [];
    \Drupal::$services = ['entity_type.manager' => new FakeMenuEntityTypes($spec)];
    $method = new \ReflectionMethod($apg_probe, 'menus');
    print json_encode((object) $method->invoke($apg_probe, $spec['questions']), $flags) . "\n";
    exit(0);
  }
  if ($spec['call'] === 'fieldItemsMany') {
    // One process for a whole batch: {"fields": {key: FIELD}} -> {key: items}.
    $method = new \ReflectionMethod($apg_probe, 'fieldItems');
    $out = [];
    foreach ($spec['fields'] as $key => $field) {
      $out[$key] = $method->invoke($apg_probe, fake_field($field));
    }
    print json_encode((object) $out, $flags) . "\n";
    exit(0);
  }
  $method = new \ReflectionMethod($apg_probe, $spec['call']);
  $argument = $spec['call'] === 'fieldItems' ? fake_field($spec['field']) : fake_entity($spec['entity']);
  print json_encode($method->invoke($apg_probe, $argument), $flags) . "\n";
}
